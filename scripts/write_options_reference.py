"""Write ``docs/options.md``, the ``backend_options`` reference, from the backends' specs.

Each backend declares its options once (``OPTION_SPECS`` in its ``_options.py``, or in its
light ``pipekit_train.adapters._<module>_options`` that core's preflight reads, checked by
``pipekit_train.engine.parse_backend_options``); this page is written from those specs, so
it says exactly what is checked. ``python scripts/write_options_reference.py`` rewrites the
page; ``--check`` exits 1 when the checked-in page is stale (the integration test runs it).
Needs every backend installed (the workspace's ``uv sync --all-packages``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from pipekit_train.engine import OptionSpec, options_markdown

PAGE = Path(__file__).resolve().parents[1] / "docs" / "options.md"

INTRO = """\
`TrainingLoop.backend_options` is a mapping of the options below; each backend checks it
before anything compiles, and a wrong key or value is a `ConfigError` naming
`backend_options.<key>` with what the key takes (a misspelt key or choice also gets the
closest valid name). This page is written from the specs the backends check against
(`scripts/write_options_reference.py`; a test fails when it is stale), so do not edit it by
hand. `resume` is one option, declared once in core, on every backend
(`docs/checkpointing.md`)."""


def _sections() -> Iterator[tuple[str, Sequence[OptionSpec], str]]:
    os.environ.setdefault("KERAS_BACKEND", "jax")  # the keras package says so otherwise
    from pipekit_train.adapters._equinox_options import OPTION_SPECS as EQX
    from pipekit_train.adapters._keras_options import OPTION_SPECS as KERAS
    from pipekit_train.adapters._lightning_options import _OWNED
    from pipekit_train.adapters._lightning_options import OPTION_SPECS as LIGHTNING
    from pipekit_train.adapters._numpyro_svi_options import OPTION_SPECS as SVI
    from pipekit_train.adapters.blackjax import _options as bjx
    from pipekit_train.adapters.numpyro_mcmc._options import OPTION_SPECS as MCMC

    yield "equinox", EQX, ""
    yield "numpyro-svi", SVI, ""
    yield (
        "numpyro-mcmc",
        MCMC,
        (
            "`init_values` is also checked against the model, traced abstractly: every key a "
            "latent sample site, each value in the site's shape and inside its support "
            "(`pipekit_train.adapters.bayes.check_init_values`, shared with blackjax)."
        ),
    )
    yield (
        "blackjax",
        bjx.COMMON_SPECS,
        (
            "The options every sampler takes; `sampler` picks the algorithm, and each sampler "
            "takes its own parameters (the sections below). A parameter of another sampler is "
            "a `ConfigError` naming the samplers that take it."
        ),
    )
    for sampler in bjx.SAMPLERS:
        yield f"blackjax: sampler = {sampler!r}", bjx.sampler_specs(sampler), ""
    owned = ", ".join(f"`{k}` (use {v})" for k, v in _OWNED.items())
    yield (
        "lightning",
        LIGHTNING,
        (
            "`resume` and `num_workers` are pipekit's; the others listed are "
            "`lightning.pytorch.Trainer` arguments checked here. Any other `Trainer` argument "
            "passes through, checked against `Trainer`'s signature; then a `Trainer` is tried "
            "once with the pass-through (nothing fits, no file is written), and Lightning's "
            "complaint is a `ConfigError` naming the key. Refused, because the loop sets them: "
            f"{owned}."
        ),
    )
    yield (
        "keras",
        KERAS,
        ("`steps_per_execution` is passed to `model.compile`, `callbacks` to `model.fit`."),
    )


def render() -> str:
    """The page's text."""
    return options_markdown(_sections(), title="Backend options", intro=INTRO)


def main(argv: Sequence[str]) -> int:
    text = render()
    if "--check" in argv:
        if not PAGE.is_file() or PAGE.read_text(encoding="utf-8") != text:
            print(f"{PAGE} is stale: run python scripts/write_options_reference.py")
            return 1
        return 0
    PAGE.write_text(text, encoding="utf-8")
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
