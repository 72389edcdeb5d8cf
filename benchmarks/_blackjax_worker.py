"""One timed whole BlackJAX run in a fresh interpreter, for case 14c.

Usage: python _blackjax_worker.py MODE — ``backend`` (``TrainingLoop(backend="blackjax")``)
or ``raw`` (``window_adaptation(...).run`` then a ``lax.scan`` sampling loop). Prints one
JSON line with ``seconds``: model set-up, compilation, warmup, 1,000 draws on the host;
imports excluded.
"""

from __future__ import annotations

import json
import sys
import time
import warnings

sys.path.insert(0, __file__.rsplit("/", 1)[0])

from _bayes_common import schools  # noqa: E402  (puts examples/ on sys.path)
from _blackjax_cases import RawNuts, backend_loop  # noqa: E402


def main() -> None:
    warnings.simplefilter("ignore")
    schools()
    start = time.perf_counter()
    if sys.argv[1] == "backend":
        backend_loop(1000, checkpoint_dir=None, callbacks=[]).run()
    else:
        RawNuts().whole_run(1000)
    print(json.dumps({"seconds": time.perf_counter() - start}))


if __name__ == "__main__":
    main()
