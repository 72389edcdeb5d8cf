"""numpyro-svi's default start runs ``SVI.init`` as one compiled program and leaves the guide
holding concrete arrays, not tracers of that program: a ``Uniform(0, tau)`` site's support
(which depends on ``tau``) still trains, draws and answers afterwards. A start NumPyro's own
eager checks would refuse (a density that is not finite there) falls back to ``SVI.init``,
so the error the user sees is NumPyro's, named by the backend; ``init: "eager"`` is NumPyro's
own start, and a bad ``init`` value is named before anything compiles."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
import optax
import pytest
from numpyro.infer import SVI, Trace_ELBO
from numpyro.infer.autoguide import AutoMultivariateNormal, AutoNormal
from numpyro.optim import optax_to_numpyro

from pipekit_train import TrainingLoop
from pipekit_train.adapters.bayes import NumpyroTask
from pipekit_train.adapters.numpyro_svi._compiled_init import compiled_init, reaches_tracer
from pipekit_train.errors import ConfigError

_rng = np.random.default_rng(4)
X = _rng.normal(size=(40,)).astype(np.float32)
Y = (0.7 * X + 0.2 * _rng.normal(size=40)).astype(np.float32)


def bounded(x, y=None):
    """``u``'s support is (0, tau): the prototype's transform holds ``tau``'s value."""
    tau = numpyro.sample("tau", dist.Uniform(1.5, 2.5))
    u = numpyro.sample("u", dist.Uniform(0.0, tau))
    with numpyro.plate("n", x.shape[0]):
        numpyro.sample("obs", dist.Normal(x * u, 0.2), obs=y)


def flat_to_nan(x, y=None):
    """A density that is NaN wherever the guide starts: NumPyro's init refuses it."""
    w = numpyro.sample("w", dist.Normal(0.0, 1.0))
    numpyro.factor("broken", jnp.nan * w)
    with numpyro.plate("n", x.shape[0]):
        numpyro.sample("obs", dist.Normal(x * w, 1.0), obs=y)


@pytest.mark.parametrize("guide", [AutoNormal, AutoMultivariateNormal])
def test_the_compiled_start_leaves_concrete_arrays_that_later_programs_can_use(guide) -> None:
    svi = SVI(bounded, guide(bounded), optax_to_numpyro(optax.adam(0.02)), Trace_ELBO())
    state = compiled_init(svi, jax.random.PRNGKey(0), (jnp.asarray(X), jnp.asarray(Y)), {})
    assert not reaches_tracer(vars(svi.guide)) and not reaches_tracer(svi.constrain_fn)
    update = jax.jit(svi.update)  # a second program over the guide's state
    for _ in range(200):
        state, loss = update(state, X, Y)
    assert np.isfinite(float(loss))
    eager = SVI(bounded, guide(bounded), optax_to_numpyro(optax.adam(0.02)), Trace_ELBO())
    ref = eager.init(jax.random.PRNGKey(0), X, Y)
    for a, b in zip(
        jax.tree.leaves(eager.get_params(ref)),
        jax.tree.leaves(
            svi.get_params(
                compiled_init(svi, jax.random.PRNGKey(0), (jnp.asarray(X), jnp.asarray(Y)), {})
            )
        ),
        strict=True,
    ):  # the same start, to rounding (a full-rank guide's latent order aside)
        np.testing.assert_allclose(np.sort(np.ravel(a)), np.sort(np.ravel(b)), rtol=1e-5)
    draws = svi.guide.sample_posterior(jax.random.PRNGKey(1), svi.get_params(state), X)
    assert 0.0 < float(draws["u"]) < float(draws["tau"])


def test_the_uniform_zero_tau_model_trains_and_answers_through_the_loop() -> None:
    op, info = TrainingLoop(
        task=NumpyroTask(model=bounded, predictive_samples=50),
        dataset=(X, Y),
        backend="numpyro-svi",
        batch_size=len(X),
        max_steps=300,
        optimizer_config={"name": "adam", "lr": 0.05},
        log_every_n_steps=100,
    ).run()
    assert info["init"] == "compiled" and np.isfinite(info["final_elbo"])
    assert np.all(op.samples["u"] < op.samples["tau"])
    np.testing.assert_allclose(op.samples["u"].mean(), 0.7, atol=0.1)
    assert op(X).shape == (len(X),)


def test_a_start_numpyro_refuses_falls_back_to_its_own_init_and_its_error() -> None:
    svi = SVI(
        flat_to_nan, AutoNormal(flat_to_nan), optax_to_numpyro(optax.adam(0.02)), Trace_ELBO()
    )
    with pytest.raises(Exception) as compiled:
        compiled_init(svi, jax.random.PRNGKey(0), (jnp.asarray(X), jnp.asarray(Y)), {})
    fresh = SVI(
        flat_to_nan, AutoNormal(flat_to_nan), optax_to_numpyro(optax.adam(0.02)), Trace_ELBO()
    )
    with pytest.raises(Exception) as eager:
        fresh.init(jax.random.PRNGKey(0), X, Y)
    assert type(compiled.value) is type(eager.value) and str(compiled.value) == str(eager.value)
    loop = TrainingLoop(
        task=NumpyroTask(model=flat_to_nan),
        dataset=(X, Y),
        backend="numpyro-svi",
        batch_size=len(X),
        max_steps=10,
    )
    with pytest.raises(ConfigError, match="initialising SVI failed") as err:
        loop.run()
    assert err.value.field == "task.guide"


def test_eager_is_numpyros_own_start_and_a_bad_init_is_named() -> None:
    kw = {
        "task": NumpyroTask(model=bounded, predictive_samples=5),
        "dataset": (X, Y),
        "backend": "numpyro-svi",
        "batch_size": len(X),
        "max_steps": 20,
    }
    _, info = TrainingLoop(**kw, backend_options={"init": "eager"}).run()
    assert info["init"] == "eager"
    with pytest.raises(ConfigError, match="compiled") as err:
        TrainingLoop(**kw, backend_options={"init": "jit"}).run()
    assert err.value.field == "backend_options.init"


@jax.tree_util.register_pytree_node_class
class _Fragile:
    """A pytree that cannot be rebuilt from concrete leaves (its unflatten refuses them)."""

    def __init__(self, x: object) -> None:
        self.x = x

    def tree_flatten(self) -> tuple[tuple[object], None]:
        return (self.x,), None

    @classmethod
    def tree_unflatten(cls, aux: None, leaves: tuple[object, ...]) -> _Fragile:
        if not isinstance(leaves[0], jax.core.Tracer):
            raise ValueError("only ever built from a tracer")
        return cls(leaves[0])


class _RememberingGuide:
    """A user's guide object that keeps what it last computed on itself."""

    def __call__(self, x, y=None):
        loc = numpyro.param("w_loc", jnp.asarray(0.0))
        self.last = _Fragile(loc)
        numpyro.sample("w", dist.Normal(loc, 0.1))


def _linear(x, y=None):
    w = numpyro.sample("w", dist.Normal(0.0, 1.0))
    with numpyro.plate("n", x.shape[0]):
        numpyro.sample("obs", dist.Normal(x * w, 0.2), obs=y)


def test_guide_state_that_cannot_be_rebuilt_falls_back_to_the_eager_start() -> None:
    svi = SVI(_linear, _RememberingGuide(), optax_to_numpyro(optax.adam(0.02)), Trace_ELBO())
    state = compiled_init(svi, jax.random.PRNGKey(0), (jnp.asarray(X), jnp.asarray(Y)), {})
    assert not reaches_tracer(vars(svi.guide))  # NumPyro's own init ran: concrete state
    eager = SVI(_linear, _RememberingGuide(), optax_to_numpyro(optax.adam(0.02)), Trace_ELBO())
    want = eager.init(jax.random.PRNGKey(0), X, Y)
    assert float(svi.get_params(state)["w_loc"]) == float(eager.get_params(want)["w_loc"])
