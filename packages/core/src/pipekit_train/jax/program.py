"""The program builder: a backend's pure step → the driver's compiled calls.

Every JAX backend writes one pure function::

    step(carry, batch, key) -> (carry, metrics)            # or
    step(carry, batch, key) -> (carry, metrics, outputs)   # per-step outputs (draws)

and hands it to :func:`build_program`, which returns a :class:`Program` for
``pipekit_train.engine.run_driver``. The builder owns, once for all backends:

- **fusion**: a one-step call and ``k``-step calls (``lax.scan`` over ``k``
  stacked batches); both compile the *same* step function with the same traced
  arguments, so ``k`` steps fused equal ``k`` single steps bit for bit;
- **randomness**: step ``s`` (0-based, counted over every phase) gets
  ``fold_in(base_key, s)``, so the chunking never changes the stream;
- **the carry as a flat list of leaves** (no pytree flattening per call), its
  buffers **donated** to the compiled call (the first carry is a copy, so the
  caller's arrays stay usable), and its layout **pinned** by ``carry_shardings``
  under a mesh (no recompile, stable checkpoint layout);
- **phases**: :class:`~pipekit_train.engine.Phase` objects, each optionally with
  its own step function (a sampler's warmup), run by the driver in order;
- **checkpoint conversion**: the carry as its pytree (the checkpoint names each leaf
  by its key path) copied in one compiled call (an asynchronous save may still read
  it while the next call donates the carry), its abstract template, and back;
- **few compilations**: by default each distinct chunk length compiles once
  (``chunking="exact"``); samplers whose step compiles slowly pass
  ``fixed_chunk=K`` to compile only one scan length and the one-step call (a
  chunk of another length runs as that scan and single steps); ``run_program``
  cuts ``K`` to the loop's regular chunk (``engine.regular_chunk``) in a run
  of at least ``SCAN_REPAID_AFTER`` such chunks, so a long run with a log every
  50 steps and ``K = 100`` compiles the 50-step scan every chunk uses.

Metrics and outputs always come back with a leading axis of the chunk length
(also for one step), possibly with more axes (chains); the driver keeps one
entry per step.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pipekit_train.engine import (
    BatchStream,
    DriverResult,
    Phase,
    StepProgram,
    regular_chunk,
    run_driver,
    total_steps,
)
from pipekit_train.jax._deps import missing_jax_extra

if TYPE_CHECKING:
    from pipekit_train.callbacks import Callback
    from pipekit_train.jax.checkpoint import Checkpointer

try:
    import jax
    import jax.numpy as jnp
except ImportError as _exc:  # pragma: no cover - exercised in a subprocess test
    raise missing_jax_extra(_exc) from _exc

__all__ = [
    "Phase",
    "Program",
    "build_program",
    "run_program",
]

StepFn = Callable[[Any, Any, jax.Array], tuple[Any, ...]]

#: A run of at least this many regular chunks compiles the regular scan (``run_program``):
#: a slow-compiling step's scan costs about a second to compile (a NUTS transition, 2
#: cores) and a single-step call ~0.3 ms of dispatch a step, so a shorter run keeps single
#: steps.
SCAN_REPAID_AFTER = 20


def _copy_leaf(x: Any) -> Any:
    if isinstance(x, jax.Array) and jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key):
        # The copy keeps the key's implementation (an rbg key stays rbg, not the default).
        impl = jax.random.key_impl(x)
        return jax.random.wrap_key_data(jnp.copy(jax.random.key_data(x)), impl=impl)
    return jnp.copy(x)


def _on_device(tree: Any) -> bool:
    """Every leaf of ``tree`` is a ``jax.Array`` (already placed)."""
    leaves = jax.tree_util.tree_leaves(tree)
    return bool(leaves) and all(isinstance(x, jax.Array) for x in leaves)


def _fresh_copy(x: Any) -> Any:
    if isinstance(x, jax.Array):
        return jax.device_put(x, x.sharding, may_alias=False)
    return jnp.asarray(x)


class Program(StepProgram):
    """The driver's ``StepProgram`` over a flat-leaf carry (built by :func:`build_program`)."""

    def __init__(
        self,
        step: StepFn,
        carry: Any,
        *,
        base_key: jax.Array,
        phases: Sequence[Phase] | None,
        phase_steps: Mapping[str, StepFn] | None,
        evaluate: Callable[[Any], dict[str, float]] | None,
        fetch: Callable[[Any], Any] | None,
        place_batch: Callable[[Any], Any] | None,
        place_chunk: Callable[[Any], Any] | None,
        carry_shardings: Any,
        output_sharding: Any,
        donate: bool,
        fixed_chunk: int | None,
    ) -> None:
        leaves, self._treedef = jax.tree_util.tree_flatten(carry)
        # The carry's buffers are donated to the compiled step; start from copies so
        # the caller's own arrays (the user's model) stay usable after the run.
        self.initial_carry: list[Any] = [_fresh_copy(x) for x in leaves]
        self.base_key = base_key
        self.phases: list[Phase] = list(phases) if phases else []
        self._steps: dict[str, StepFn] = dict(phase_steps or {})
        self._default_step = step
        self._evaluate = evaluate
        self._fetch = fetch if fetch is not None else jax.device_get
        self._place_batch = place_batch
        self._place_chunk = place_chunk
        #: the one scan length compiled (with the one-step call), or None: every length
        self.fixed_chunk = fixed_chunk
        self._donate = donate
        if carry_shardings is not None:
            shardings = list(jax.tree_util.tree_leaves(carry_shardings))
            if len(shardings) != len(leaves):
                raise ValueError(
                    f"carry_shardings has {len(shardings)} leaves, the carry {len(leaves)}"
                )
            self._out_shardings: Any = (shardings, output_sharding, output_sharding)
        else:
            self._out_shardings = None
        self._compiled: dict[tuple[str | None, int], Any] = {}
        self._copy = jax.jit(lambda xs: [_copy_leaf(x) for x in xs])

    # -- compilation ----------------------------------------------------------------------
    def _phase_name(self, step: int) -> str:
        total = 0
        for p in self.phases:
            total += p.steps
            if step < total:
                return p.name
        return self.phases[-1].name if self.phases else "train"

    def _step_fn(self, phase: str) -> StepFn:
        return self._steps.get(phase, self._default_step)

    def _one_step(self, phase: str) -> Callable[..., Any]:
        fn = self._step_fn(phase)
        treedef = self._treedef

        def one(leaves: list[Any], batch: Any, key: jax.Array, s: jax.Array) -> tuple[Any, ...]:
            carry = jax.tree_util.tree_unflatten(treedef, leaves)
            out = fn(carry, batch, jax.random.fold_in(key, s))
            new, metrics = out[0], out[1]
            outputs = out[2] if len(out) > 2 else {}
            return jax.tree_util.tree_leaves(new), metrics, outputs

        return one

    def _compiled_call(self, phase: str, k: int) -> Any:
        """The compiled call running ``k`` steps of ``phase`` (cached).

        Cached per step *function*, not per phase: phases without their own step share
        the default step's compiled calls (a sampler's warmup and sampling compile once).
        """
        key = (phase if phase in self._steps else None, k)
        cached = self._compiled.get(key)
        if cached is not None:
            return cached
        one = self._one_step(phase)
        donate = (0,) if self._donate else ()
        if k == 1:

            def single(leaves: list[Any], batch: Any, key: jax.Array, s: Any) -> tuple[Any, ...]:
                new, metrics, outputs = one(leaves, batch, key, s)
                lead = jax.tree_util.tree_map(lambda x: jnp.expand_dims(x, 0), (metrics, outputs))
                return new, lead[0], lead[1]

            call = jax.jit(single, donate_argnums=donate, out_shardings=self._out_shardings)
        else:

            def chunk(leaves: list[Any], batches: Any, key: jax.Array, s: Any) -> tuple[Any, ...]:
                steps = s + jnp.arange(k, dtype=jnp.int32)

                def body(c: list[Any], xs: tuple[Any, Any]) -> tuple[list[Any], Any]:
                    batch, si = xs
                    new, metrics, outputs = one(c, batch, key, si)
                    return new, (metrics, outputs)

                new, (metrics, outputs) = jax.lax.scan(body, leaves, (batches, steps))
                return new, metrics, outputs

            call = jax.jit(chunk, donate_argnums=donate, out_shardings=self._out_shardings)
        self._compiled[key] = call
        return call

    # -- StepProgram ----------------------------------------------------------------------
    def train_chunk(self, carry: Any, batches: Any, step: int, num_steps: int) -> tuple[Any, ...]:
        """Run steps ``step+1 … step+num_steps``; metrics and outputs lead with ``num_steps``."""
        phase = self._phase_name(step)
        fixed = self.fixed_chunk
        if fixed is not None and num_steps not in (1, fixed):
            return self._in_compiled_sizes(carry, batches, step, num_steps, fixed)
        s = jnp.asarray(step, dtype=jnp.int32)
        if num_steps == 1:
            batch = None
            if batches is not None:
                batch = jax.tree_util.tree_map(lambda v: v[0], batches)
                if self._place_batch is not None:
                    batch = self._place_batch(batch)
            out: tuple[Any, ...] = self._compiled_call(phase, 1)(carry, batch, self.base_key, s)
            return out
        if batches is not None and self._place_chunk is not None and not _on_device(batches):
            batches = self._place_chunk(batches)
        out = self._compiled_call(phase, num_steps)(carry, batches, self.base_key, s)
        return out

    def place_chunk(self, batches: Any) -> Any:
        """A ``(k, B, …)`` chunk on the devices, as ``train_chunk`` would put it.

        For prefetching (``BatchIterator.prefetch``): the host-to-device copy of the
        next chunk then overlaps the current computation. ``train_chunk`` leaves a
        chunk that is already on the devices as it is.
        """
        if self._place_chunk is not None:
            batches = self._place_chunk(batches)
        if _on_device(batches):
            return batches
        return jax.device_put(batches)

    def _in_compiled_sizes(
        self, carry: Any, batches: Any, step: int, num_steps: int, fixed: int
    ) -> tuple[Any, ...]:
        """A chunk of another length as ``fixed``-step and one-step calls (``fixed_chunk``)."""
        metrics_parts: list[Any] = []
        output_parts: list[Any] = []
        done = 0
        while done < num_steps:
            n = fixed if num_steps - done >= fixed else 1
            sub = None
            if batches is not None:
                sub = jax.tree_util.tree_map(lambda v, a=done, b=done + n: v[a:b], batches)
            carry, m, o = self.train_chunk(carry, sub, step + done, n)
            metrics_parts.append(m)
            output_parts.append(o)
            done += n

        def cat(*xs: Any) -> Any:
            return jnp.concatenate(xs)

        metrics = jax.tree_util.tree_map(cat, *metrics_parts)
        outputs = jax.tree_util.tree_map(cat, *output_parts)
        return carry, metrics, outputs

    def evaluate(self, carry: Any) -> dict[str, float]:
        if self._evaluate is None:
            return {}
        return self._evaluate(self.tree(carry))

    def fetch(self, tree: Any) -> Any:
        return self._fetch(tree)

    def checkpoint_state(self, carry: list[Any]) -> Any:
        # One compiled copy: the next call donates the carry's buffers while an
        # asynchronous save may still be reading them. Saved as the carry's pytree, so the
        # checkpoint names each leaf by its key path (``model.layers.0.weight``).
        return self.tree(self._copy(carry))

    def checkpoint_template(self, carry: list[Any]) -> Any:
        return self.tree(
            [
                jax.ShapeDtypeStruct(
                    leaf.shape, leaf.dtype, sharding=getattr(leaf, "sharding", None)
                )
                for leaf in carry
            ]
        )

    def carry_from_checkpoint(self, state: Any) -> list[Any]:
        return list(jax.tree_util.tree_leaves(state))

    def tree(self, carry: list[Any]) -> Any:
        """The carry as the pytree the step functions see."""
        return jax.tree_util.tree_unflatten(self._treedef, carry)


def build_program(
    step: StepFn,
    carry: Any,
    *,
    base_key: jax.Array,
    phases: Sequence[Phase] | None = None,
    phase_steps: Mapping[str, StepFn] | None = None,
    evaluate: Callable[[Any], dict[str, float]] | None = None,
    fetch: Callable[[Any], Any] | None = None,
    place_batch: Callable[[Any], Any] | None = None,
    place_chunk: Callable[[Any], Any] | None = None,
    carry_shardings: Any = None,
    output_sharding: Any = None,
    donate: bool = True,
    fixed_chunk: int | None = None,
) -> Program:
    """Build the driver's compiled program from a pure ``step(carry, batch, key)``.

    Args:
        step: the pure step; returns ``(carry, metrics)`` or ``(carry, metrics,
            outputs)``, ``metrics`` and ``outputs`` being dicts of arrays (scalars,
            or with extra axes such as chains). ``batch`` is ``None`` for programs
            without a data stream.
        carry: the initial carry, a pytree of arrays (copied, never donated).
        base_key: step ``s`` is given ``fold_in(base_key, s)``.
        phases: the program's phases, in order (default: one phase of
            ``loop.max_steps`` steps, chosen by the driver).
        phase_steps: a phase name → its own step function (same carry structure).
        evaluate: host-side evaluation on the carry pytree → ``{name: float}``.
        fetch: device → host transfer (default ``jax.device_get``).
        place_batch / place_chunk: put one batch / a ``(k, B, …)`` chunk on the
            devices (e.g. onto a data sharding) before the call.
        carry_shardings: a pytree of shardings matching ``carry`` to pin its layout.
        output_sharding: the sharding of metrics and outputs (with ``carry_shardings``).
        donate: donate the carry's buffers to each call.
        fixed_chunk: compile only a ``fixed_chunk``-step scan and the one-step call.
    """
    if fixed_chunk is not None and (isinstance(fixed_chunk, bool) or fixed_chunk < 1):
        raise ValueError(f"fixed_chunk must be a positive integer, got {fixed_chunk!r}")
    return Program(
        step,
        carry,
        base_key=base_key,
        phases=phases,
        phase_steps=phase_steps,
        evaluate=evaluate,
        fetch=fetch,
        place_batch=place_batch,
        place_chunk=place_chunk,
        carry_shardings=carry_shardings,
        output_sharding=output_sharding,
        donate=donate,
        fixed_chunk=fixed_chunk,
    )


def run_program(
    loop: Any,
    program: Program,
    *,
    data: BatchStream | None,
    checkpointer: Checkpointer | None,
    steps_per_call: int,
    fingerprint: dict[str, Any] | None = None,
    hooks: Sequence[Callback] = (),
) -> DriverResult:
    """``run_driver`` over a built program, the way every JAX backend calls it.

    The program's own first carry and base key; the checkpointer's fingerprint (which
    may record what the checkpointer adds) when it has one; process 0 writes metrics;
    ``hooks``, the backend's own callbacks (``run_driver``).
    """
    if program.fixed_chunk is not None:
        # A fixed scan length longer than the loop's events allow would never be called
        # (every chunk shorter, so run as single steps): a run long enough to repay one more
        # compile compiles the loop's regular length instead (decision 0216).
        regular = regular_chunk(
            loop, checkpointing=checkpointer is not None, steps_per_call=steps_per_call
        )
        long_run = total_steps(program, loop) >= SCAN_REPAID_AFTER * regular
        if regular < program.fixed_chunk and long_run:
            program.fixed_chunk = regular
    return run_driver(
        loop,
        program,
        program.initial_carry,
        data=data,
        checkpointer=checkpointer,
        steps_per_call=steps_per_call,
        fingerprint=checkpointer.fingerprint if checkpointer is not None else fingerprint,
        is_primary=jax.process_index() == 0,
        rng=program.base_key,
        hooks=hooks,
    )
