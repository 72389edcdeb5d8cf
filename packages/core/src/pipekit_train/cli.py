"""The ``pipekit-train`` command: ``run``, ``backends``, ``inspect``."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from .errors import PipekitError

__all__ = ["main"]


def _cmd_run(args: argparse.Namespace) -> int:
    import yaml

    from .callbacks import ProgressBar
    from .config import _read, apply_overrides, loop_from_dict
    from .errors import ConfigError

    # The argument is always a file path (whatever its suffix), never YAML text.
    text, search_path = _read(Path(args.loop))
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"invalid YAML in {args.loop}: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{args.loop} must hold a mapping of TrainingLoop fields")
    data = apply_overrides(data, args.set or [])
    loop = loop_from_dict(data, search_path)
    if not args.no_progress and not any(isinstance(c, ProgressBar) for c in loop.callbacks):
        loop.callbacks.append(ProgressBar())
    if args.compilation_cache != "off":
        loop.backend_options.setdefault("compilation_cache", args.compilation_cache)
    print(f"pipekit-train: running {args.loop} on backend {loop.backend!r}", file=sys.stderr)
    op, info = loop.run()
    _print_summary(info)
    if args.save:
        op.save(args.save)
        print(f"saved trained model to {args.save}")
    if args.info_json:
        Path(args.info_json).write_text(json.dumps(info, indent=2, default=str))
    return 0


def _print_summary(info: dict[str, Any]) -> None:
    print(
        f"backend: {info.get('backend')}  final_step: {info.get('final_step')}  "
        f"resumed_from_step: {info.get('resumed_from_step')}"
    )
    if info.get("interrupted"):
        print(f"interrupted by {info['interrupted']}; checkpoint saved, rerun to resume")
    if info.get("total_seconds") is not None:
        print(f"wall time: {info['total_seconds']:.1f} s")
    metrics = info.get("final_metrics") or {}
    if metrics:
        print("final metrics:")
        for key in sorted(metrics):
            print(f"  {key:>16}: {metrics[key]:.6g}")
    if "val_accuracy" in metrics:
        print(f"final test accuracy: {metrics['val_accuracy']:.4f}")


def _cmd_backends(args: argparse.Namespace) -> int:
    import importlib

    from .registry import distribution_version, installed_backends

    print(f"pipekit-train-core {distribution_version('pipekit-train-core') or '(unknown)'}")
    backends = installed_backends()
    if not backends:
        print("no backends installed (pip install pipekit-train-equinox, …)")
        return 0
    for backend in backends:
        line = f"{backend.name:<14} {backend.distribution} {backend.version}"
        try:
            module = importlib.import_module(backend.module)
            versions: dict[str, str] = getattr(module, "library_versions", lambda: {})()
            if versions:
                line += "  (" + ", ".join(f"{k} {v}" for k, v in versions.items()) + ")"
        except ImportError as exc:
            line += f"  [broken: {exc}]"
        print(line)
    return 0


def _cmd_inspect(args: argparse.Namespace) -> int:
    try:
        from .jax.checkpoint import inspect_checkpoints
    except ImportError as exc:
        raise PipekitError(
            "inspecting checkpoints needs the JAX extra: pip install 'pipekit-train-core[jax]'"
        ) from exc
    rows = inspect_checkpoints(args.directory)
    if args.json:
        print(json.dumps(rows, indent=2, default=str))
        return 0
    if not rows:
        print(f"no checkpoints in {args.directory}")
        return 0
    for row in rows:
        print(json.dumps(row, default=str))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pipekit-train", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run a TrainingLoop YAML file")
    run.add_argument("loop", help="path of the TrainingLoop YAML")
    run.add_argument(
        "--set",
        action="append",
        metavar="FIELD=VALUE",
        help="override a field (dotted for nested keys; the value is parsed as YAML)",
    )
    run.add_argument("--save", metavar="DIR", help="save the trained operator here")
    run.add_argument("--info-json", metavar="FILE", help="write backend_info as JSON")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    run.add_argument(
        "--compilation-cache",
        default=os.environ.get(
            "PIPEKIT_TRAIN_COMPILATION_CACHE",
            str(Path.home() / ".cache" / "pipekit-train" / "jax"),
        ),
        help="JAX persistent compilation cache folder, or 'off' (default: %(default)s)",
    )
    run.set_defaults(func=_cmd_run)
    backends = sub.add_parser("backends", help="list installed backends and versions")
    backends.set_defaults(func=_cmd_backends)
    inspect = sub.add_parser("inspect", help="list the checkpoints in a directory")
    inspect.add_argument("directory")
    inspect.add_argument("--json", action="store_true")
    inspect.set_defaults(func=_cmd_inspect)
    from .plot._cli import add_plot_command

    add_plot_command(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``pipekit-train`` console script."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except PipekitError as exc:
        print(f"pipekit-train: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
