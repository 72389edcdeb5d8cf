"""One whole training run in a fresh interpreter, for the whole-run suite (case 17).

Usage: python _train_worker.py MODE CACHE [SCALE]

MODE is ``equinox-backend``, ``equinox-scan``, ``lightning-backend``, ``lightning-plain``,
``keras-backend`` or ``keras-plain``; CACHE is the pipekit side's persistent compilation
cache folder (``off`` for none; the plain scripts never get one: JAX's default).

Each mode imports only what its script needs: a plain script does not import pipekit-train
(nor, for Lightning and Keras, JAX or Equinox), since its user's script would not. Marks
(``_spawn.Marks``, ``time.monotonic()``): every 50 steps on the pipekit side (its host events,
log every 50), after every 50-step chunk of the scan script, every 50 global steps of plain
Lightning, and at each epoch end of plain Keras (14 steps an epoch). Prints one JSON line.
"""

from __future__ import annotations

import os
import sys
import warnings
from typing import Any

sys.path.insert(0, __file__.rsplit("/", 1)[0])

from _data import digits  # noqa: E402
from _spawn import Marks, emit  # noqa: E402

#: Steps of each whole run: long enough that the second half gives a steady-state rate
#: (1000 steps ≈ 1-3 s here), short enough for ~12 processes a round. Keras and Lightning:
#: 75 epochs of 14 whole batches.
EQUINOX_STEPS = 2000
TORCH_KERAS_STEPS = 1050
CHUNK = 50


def _pipekit_marks(marks: Marks) -> Any:
    from pipekit_train import Callback

    class _M(Callback):
        def on_step_end(self, loop: Any, state: Any) -> None:
            marks.step(int(state.step))

    return _M()


def main() -> None:
    mode, cache = sys.argv[1], sys.argv[2]
    scale = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    global EQUINOX_STEPS, TORCH_KERAS_STEPS
    EQUINOX_STEPS = EQUINOX_STEPS // scale // CHUNK * CHUNK
    TORCH_KERAS_STEPS = TORCH_KERAS_STEPS // scale  # 350 at 3: 25 epochs, 7 log steps
    cache_dir = None if cache == "off" else cache
    warnings.simplefilter("ignore")
    if mode.startswith("keras"):
        os.environ["KERAS_BACKEND"] = "jax"
    data = digits()
    marks = Marks()
    marks.start()
    if mode == "equinox-backend":
        from _common import equinox_loop

        cb = _pipekit_marks(marks)
        equinox_loop(data, max_steps=EQUINOX_STEPS, callbacks=[cb], cache_dir=cache_dir).run()
    elif mode == "equinox-scan":
        from _scan_ref import ScanLoop

        loop = ScanLoop(data, CHUNK)
        for c in range(EQUINOX_STEPS // CHUNK):
            loop.run(1)  # one 50-step chunk, then the fetch of its last loss
            marks.step((c + 1) * CHUNK)
    elif mode == "lightning-backend":
        import _lightning_ref

        _lightning_ref.backend_loop(data, TORCH_KERAS_STEPS, [_pipekit_marks(marks)]).run()
    elif mode == "lightning-plain":
        import _lightning_ref

        def on_step(step: int) -> None:
            if step % CHUNK == 0:
                marks.step(step)

        _lightning_ref.plain_fit(data, TORCH_KERAS_STEPS, on_step)
    elif mode == "keras-backend":
        import _keras_ref

        _keras_ref.backend_loop(
            data,
            max_steps=TORCH_KERAS_STEPS,
            callbacks=[_pipekit_marks(marks)],
            cache_dir=cache_dir,
        ).run()
    elif mode == "keras-plain":
        import _keras_ref

        per_epoch = (len(data["x"]) // _keras_ref.BATCH) or 1
        _keras_ref.plain_fit(
            data,
            epochs=TORCH_KERAS_STEPS // per_epoch,
            on_epoch_end=lambda epoch: marks.step((epoch + 1) * per_epoch),
        )
    else:
        raise SystemExit(f"unknown mode {mode!r}")
    emit(marks)


if __name__ == "__main__":
    main()
