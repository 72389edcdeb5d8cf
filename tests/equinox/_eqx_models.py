"""Model source shared by the JaxModelOp tests (written into a temp dir as a factory module)."""

FACTORY_SOURCE = """
import equinox as eqx
import jax


def make_mlp(in_size, out_size, width, depth, seed=0):
    return eqx.nn.MLP(in_size, out_size, width, depth, key=jax.random.key(seed))


def broken(**kwargs):
    raise RuntimeError("factory exploded")


def not_a_module(**kwargs):
    return {"weights": 1}
"""
