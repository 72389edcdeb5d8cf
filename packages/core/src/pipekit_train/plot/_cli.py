"""The ``pipekit-train plot RUN_DIR [--out DIR]`` subcommand."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["add_plot_command"]


def _cmd_plot(args: argparse.Namespace) -> int:
    from . import plot

    for path in plot(args.run_dir, out=args.out):
        print(path)
    return 0


def add_plot_command(sub: Any) -> None:
    """Register ``plot`` on the ``pipekit-train`` sub-parsers."""
    parser = sub.add_parser(
        "plot",
        help="draw a run's metric curves (and backend plots) as PNG files",
        description="Draw PNG plots from the logs in a run folder (its checkpoint_dir, or "
        "runs/<backend>-<time>): training and val_ metric curves and the learning rate.",
    )
    parser.add_argument("run_dir", metavar="RUN_DIR", help="the run folder")
    parser.add_argument(
        "--out", metavar="DIR", default=None, help="where the PNGs go (default: RUN_DIR/plots)"
    )
    parser.set_defaults(func=_cmd_plot)
