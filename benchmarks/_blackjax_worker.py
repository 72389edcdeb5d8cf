"""One timed whole BlackJAX run in a fresh interpreter, for cases 14c and 14h.

Usage: python _blackjax_worker.py MODE CACHE — ``backend`` (``TrainingLoop(backend="blackjax")``
with CACHE as its persistent compilation cache, ``off`` for none), ``backend_ckpt`` (the same
with a ``checkpoint_dir``, a fresh temporary folder, at ``Checkpoint()``'s default cadence) or
``raw`` (``window_adaptation(...).run`` then a ``lax.scan`` sampling loop; no cache). Prints one
JSON line with ``seconds``: model set-up, compilation, warmup, 1,000 draws on the host, imports
excluded; and ``marks``, the ``time.monotonic()`` of the backend's host events.
"""

from __future__ import annotations

import sys
import tempfile
import warnings
from typing import Any

sys.path.insert(0, __file__.rsplit("/", 1)[0])

from _bayes_common import Stamps, schools  # noqa: E402  (puts examples/ on sys.path)
from _blackjax_cases import RawNuts, backend_loop  # noqa: E402
from _spawn import Marks, emit  # noqa: E402


class _Marks(Stamps):
    def __init__(self, marks: Marks) -> None:
        super().__init__()
        self.marks = marks

    def on_step_end(self, loop: Any, state: Any) -> None:
        self.marks.step(int(state.step))


def main() -> None:
    warnings.simplefilter("ignore")
    mode, cache = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else "off")
    schools()
    marks = Marks()
    marks.start()
    if mode in ("backend", "backend_ckpt"):
        with tempfile.TemporaryDirectory(prefix="pipekit-bench-bj-ckpt-") as folder:
            backend_loop(
                1000,
                checkpoint_dir=folder if mode == "backend_ckpt" else None,
                callbacks=[_Marks(marks)],
                cache_dir=None if cache == "off" else cache,
                every=None,
            ).run()
    else:
        RawNuts().whole_run(1000)
    emit(marks)


if __name__ == "__main__":
    main()
