"""One MCMC transition as a pure function of the sampler state, the way ``MCMC.run`` makes it.

``MCMC.run`` initialises the kernel with ``kernel.init(key, num_warmup, ...)``
(the key split ``num_chains`` ways first) and then applies ``kernel.sample``
``num_warmup + num_samples`` times, each draw's randomness coming from the
state's own ``rng_key``. Adaptation ends by itself at ``state.i == num_warmup``.
So the run can be cut anywhere: ``ChainStep.step`` applied in ``lax.scan``
chunks of any size gives the same bits as one ``MCMC.run`` with the same seed
and settings, and the ``HMCState`` (adaptation included) is the whole carry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import jax
import jax.numpy as jnp

from pipekit_train.adapters.bayes import NumpyroTask

from ._options import McmcOptions
from ._potential import ModelPotential

__all__ = ["ChainStep", "chain_keys", "init_model_key", "make_kernel", "make_init_strategy"]


def make_init_strategy(options: McmcOptions) -> Callable[..., Any]:
    """NumPyro's init strategy for ``options.init_strategy`` (``init_values`` on top)."""
    from numpyro import infer

    base = {
        # Screened starts are passed to kernel.init as init_params (._screened); where the
        # screen cannot weigh the model the kernel starts as NumPyro's default would.
        "screened": infer.init_to_uniform,
        "uniform": infer.init_to_uniform,
        "median": infer.init_to_median,
        "mean": infer.init_to_mean,
        "feasible": infer.init_to_feasible,
        "sample": infer.init_to_sample,
    }[options.init_strategy]
    if options.init_values:
        values = {k: jnp.asarray(v) for k, v in options.init_values.items()}
        if options.init_jitter > 0:
            from pipekit_train.adapters.bayes import init_to_value_jittered

            # Each chain its own start around the values (uniform for the other sites).
            return init_to_value_jittered(values=values, scale=options.init_jitter)
        return infer.init_to_value(values=values)  # falls back to uniform for the rest
    return base


def make_kernel(
    model: Callable[..., Any], options: McmcOptions, potential: ModelPotential | None = None
) -> Any:
    """The NUTS (default) or HMC kernel ``options`` describe, or the user's own one as built.

    ``potential``: the model's potential built at the screened starts (``._potential``); the
    kernel then takes it as its ``potential_fn`` and skips NumPyro's search for a start.
    """
    from numpyro.infer import HMC, NUTS

    if options.kernel_object is not None:
        return options.kernel_object

    imm = options.inverse_mass_matrix
    if isinstance(imm, dict):
        imm = {k: jnp.asarray(v) for k, v in imm.items()}
    elif imm is not None:
        imm = jnp.asarray(imm)
    common = dict(
        dense_mass=options.dense_mass,
        target_accept_prob=options.target_accept,
        init_strategy=make_init_strategy(options),
        regularize_mass_matrix=options.regularize_mass_matrix,
        step_size=options.step_size,
        adapt_step_size=options.adapt_step_size,
        adapt_mass_matrix=options.adapt_mass_matrix,
        inverse_mass_matrix=imm,
        forward_mode_differentiation=options.forward_mode_differentiation,
    )
    target: dict[str, Any] = {"model": model}
    if potential is not None:
        target = {"potential_fn": potential.potential_fn}
        common["dense_mass"] = potential.dense_mass(options.dense_mass)
    if options.kernel == "hmc":
        extra: dict[str, Any] = {}
        if options.num_steps is not None:
            extra["num_steps"] = options.num_steps
        if options.trajectory_length is not None:
            extra["trajectory_length"] = options.trajectory_length
        return HMC(**target, **common, **extra)
    return NUTS(**target, max_tree_depth=options.max_tree_depth, **common)


def chain_keys(seed: int, num_chains: int) -> jax.Array:
    """The key ``kernel.init`` gets, as ``MCMC.run`` derives it: ``PRNGKey(seed)`` for one
    chain, its split into one key per chain (a leading axis) for several."""
    key = jax.random.PRNGKey(seed)
    return key if num_chains == 1 else jax.random.split(key, num_chains)


def init_model_key(seed: int, task: NumpyroTask) -> jax.Array:
    """The key ``HMC.init`` hands ``initialize_model`` for the first chain, as
    ``ChainStep.init`` calls it: the second half of the split of that chain's key."""
    keys = chain_keys(seed, task.num_chains)
    _, init_key = jax.random.split(keys if task.num_chains == 1 else keys[0])
    return init_key


@dataclass
class ChainStep:
    """The kernel, bound to the data, as ``init(seed)`` and ``step(state) -> (state, draw)``.

    ``draw`` holds the constrained sites (deterministic sites included, as
    ``MCMC.get_samples`` reports them) under ``"samples"``, and the per-draw
    sampler statistics (``diverging``, ``accept_prob``, ``num_steps``,
    ``potential_energy``). With several chains every leaf has a leading chain axis.
    """

    kernel: Any
    task: NumpyroTask
    #: the model's positional arguments: ``(x, y)`` in the (x, y) form, ``()`` for data
    #: given by the model's own argument names (or none)
    args: tuple[Any, ...]
    chain_method: str = "vectorized"
    #: the model's keyword arrays: the named arrays beyond x / y, or all of them by name
    kwargs: dict[str, Any] = field(default_factory=dict)
    #: the draws' postprocessing where the kernel has a potential, not the model, to give it
    #: (``._potential``); None: the kernel's own ``postprocess_fn``
    postprocess: Callable[[dict[str, Any]], dict[str, Any]] | None = None

    def __post_init__(self) -> None:
        self._postprocess: Any = None
        # A jit boundary around kernel.sample, as MCMC.run's fori_collect has one around its
        # loop body: without it XLA fuses the transition into the surrounding scan differently
        # and a single chain drifts from MCMC.run in the last bits (measured, NumPyro 0.22).
        self._sample = jax.jit(lambda state: self.kernel.sample(state, self.args, self.kwargs))

    @property
    def num_chains(self) -> int:
        return self.task.num_chains

    def init(self, seed: int, starts: dict[str, Any] | None = None) -> Any:
        """The initial ``HMCState``; for several chains, stacked along a leading axis.

        ``starts``: unconstrained values ``{site: (num_chains, …)}`` handed to
        ``kernel.init`` as ``init_params``, as ``MCMC.run(..., init_params=starts)`` does.
        """
        from numpyro.infer.hmc import HMCState  # noqa: F401 - the state type, for readers

        keys = chain_keys(seed, self.num_chains)
        args = self.args
        if self.num_chains == 1:
            one = None if starts is None else {k: v[0] for k, v in starts.items()}
            state = self.kernel.init(keys, self.task.num_warmup, one, args, self.kwargs)
        elif self.chain_method == "vectorized":
            state = self.kernel.init(keys, self.task.num_warmup, starts, args, self.kwargs)
        else:  # sequential: each chain initialised alone, as MCMC.run's lax.map does
            per_chain = [
                None if starts is None else {k: v[c] for k, v in starts.items()}
                for c in range(self.num_chains)
            ]
            states = [
                self.kernel.init(k, self.task.num_warmup, z, args, self.kwargs)
                for k, z in zip(keys, per_chain, strict=True)
            ]
            state = jax.tree.map(lambda *a: jnp.stack(a), *states)
        self._postprocess = self.postprocess or self.kernel.postprocess_fn(args, self.kwargs)
        return state

    def _one(self, state: Any) -> tuple[Any, dict[str, Any]]:
        new = self._sample(state)
        return new, self._draw(new)

    def _draw(self, state: Any) -> dict[str, Any]:
        steps = jnp.asarray(state.num_steps, jnp.int32)
        return {
            "samples": self._postprocess(state.z),
            "diverging": state.diverging,
            "accept_prob": state.accept_prob,
            "num_steps": state.num_steps,
            "potential_energy": state.potential_energy,
            "energy": state.energy,
            "step_size": state.adapt_state.step_size,
            # NUTS's tree depth d holds 2^(d-1) <= leapfrog steps <= 2^d - 1: the bit length.
            "tree_depth": jnp.int32(32) - jax.lax.clz(steps),
        }

    def step(self, state: Any) -> tuple[Any, dict[str, Any]]:
        """One transition of every chain; ``init`` must have run."""
        if self.num_chains == 1:
            return self._one(state)
        if self.chain_method == "vectorized":
            # kernel.init with batched keys made kernel.sample act on all chains at once.
            new = self._sample(state)
            return new, jax.vmap(self._draw)(new)
        return jax.lax.map(self._one, state)
