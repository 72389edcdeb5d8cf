"""The ``pipekit-train sweep FILE [--show]`` subcommand."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from .._compile_cache_default import default_compilation_cache_dir

__all__ = ["add_sweep_command"]

_EPILOG = """\
examples:
  pipekit-train sweep examples/digits_sweep.yaml          # run, or resume, the sweep
  pipekit-train sweep examples/digits_sweep.yaml --show   # the study table
  pipekit-train plot runs/digits_sweep                    # history, parallel coordinates"""


def _show(sweep: Any) -> None:
    from ._table import format_rows, load_study, study_rows

    study = load_study(sweep.folder)
    try:
        best = study.best_trial.number
    except ValueError:
        best = None
    rows = study_rows(study)
    print(format_rows(rows, best))
    done = sum(r["state"] in ("COMPLETE", "PRUNED", "FAIL") for r in rows)
    print(
        f"{done} of {sweep.n_trials} trials finished; objective {sweep.objective} "
        f"({sweep.direction})"
    )
    best_yaml = Path(sweep.folder) / "best.yaml"
    if best is not None and best_yaml.is_file():
        print(f"best trial {best}; its config: {best_yaml}")


def _cmd_sweep(args: argparse.Namespace) -> int:
    from ._file import load_sweep

    sweep = load_sweep(args.file)
    if args.n_trials is not None:
        sweep.n_trials = args.n_trials
    cache = args.compilation_cache or str(default_compilation_cache_dir())
    sweep.compilation_cache = None if cache == "off" else cache
    if args.show:
        _show(sweep)
        return 0
    print(
        f"pipekit-train: sweep {args.file} in {sweep.folder} ({sweep.n_trials} trials)",
        file=sys.stderr,
    )
    study = sweep.run()
    choice = sweep.population_choice
    if choice is not None:
        how = (
            f"{sweep.population} trials at a time as one vmapped program"
            if choice.pays or not sweep.population_rule
            else "one trial at a time (population_rule: false forces the population)"
        )
        print(f"pipekit-train: population: {how}; the rule: {choice.reason}", file=sys.stderr)
    _show(sweep)
    if sweep.interrupted:
        print(
            f"pipekit-train: sweep interrupted; its running trial is checkpointed. Resume "
            f"with: pipekit-train sweep {args.file}",
            file=sys.stderr,
        )
        return 130
    best = sweep.write_best(study)
    if best is not None:
        here = sweep.search_path[0] if sweep.search_path else "."
        print(f"train the best config again: PYTHONPATH={here} pipekit-train run {best}")
    return 0


def add_sweep_command(sub: Any) -> None:
    """Register ``sweep`` on the ``pipekit-train`` sub-parsers."""
    parser = sub.add_parser(
        "sweep",
        help="run (or resume) an Optuna sweep of a loop described in a sweep YAML file",
        description="Run the trials of a sweep file, each a normal run in "
        "<folder>/trials/<number>; a killed sweep started again resumes the study and its "
        "unfinished trial. Needs: pip install 'pipekit-train-core[sweep]'.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("file", metavar="FILE", help="the sweep YAML file")
    parser.add_argument("--show", action="store_true", help="print the study table and stop")
    parser.add_argument("--n-trials", type=int, default=None, help="override n_trials")
    parser.add_argument(
        "--compilation-cache",
        metavar="DIR|off",
        default=os.environ.get("PIPEKIT_TRAIN_COMPILATION_CACHE"),
        help="JAX persistent compilation cache for the trials, as for `pipekit-train run`",
    )
    parser.set_defaults(func=_cmd_sweep)
