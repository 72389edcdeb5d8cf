"""The ``pipekit-train`` command: ``run``, ``backends``, ``inspect``."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from ._compile_cache_default import default_compilation_cache_dir, runs_on_jax
from ._report import posterior_report
from .errors import CheckpointError, PipekitError

__all__ = ["main", "build_parser"]

_DESCRIPTION = """\
Train a TrainingLoop described in YAML on the backend it names, list the
backends pipekit-train knows, or inspect a checkpoint directory."""

_EPILOG = """\
examples:
  pipekit-train run examples/digits_mlp.yaml --set max_steps=3000
  pipekit-train backends
  pipekit-train inspect runs/digits_mlp/checkpoints"""

_RUN_EPILOG = """\
example:
  pipekit-train run examples/digits_mlp.yaml --set backend_options.resume=force"""

_BACKENDS_EPILOG = """\
example:
  pipekit-train backends"""

_INSPECT_EPILOG = """\
example:
  pipekit-train inspect runs/digits_mlp/checkpoints --json"""


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
    cache = args.compilation_cache or str(default_compilation_cache_dir())
    if cache != "off" and runs_on_jax(loop.backend):
        loop.backend_options.setdefault("compilation_cache", cache)
    early = _answer_early(loop, args)
    if early is not None:
        return early
    print(f"pipekit-train: running {args.loop} on backend {loop.backend!r}", file=sys.stderr)
    op, info = loop.run()
    _print_summary(info, loop.checkpoint_dir)
    _print_where_to_look(loop, info)
    if args.info_json:
        Path(args.info_json).write_text(json.dumps(info, indent=2, default=str))
    interrupted = info.get("interrupted")
    if interrupted:
        _print_interrupted(args, info, loop.checkpoint_dir)
        return INTERRUPTED_EXIT_CODES.get(str(interrupted), 1)
    if args.save:
        return _save(op, args, loop.checkpoint_dir)
    return 0


def _save(op: Any, args: argparse.Namespace, checkpoint_dir: Any) -> int:
    """``op.save(--save)``; a folder that cannot be written (an ``OSError``: no permission, a
    file in the way, a full disk; or the op's own ``PipekitError`` saying so) is one error
    line naming the path, the cause and what was kept, never a traceback: the run itself
    finished, and a rerun with another ``--save`` restores it without training."""
    try:
        op.save(args.save)
    except (OSError, PipekitError) as exc:
        kept = (
            f"the run's final checkpoint is kept in {checkpoint_dir}; rerun with another "
            "--save (the finished run is restored, not trained again)"
            if checkpoint_dir is not None
            else "the run had no checkpoint_dir, so nothing of it was kept"
        )
        print(
            f"pipekit-train: error: could not save the trained model to {args.save}: "
            f"{type(exc).__name__}: {_error_text(exc) if isinstance(exc, PipekitError) else exc}"
            f"; {kept}",
            file=sys.stderr,
        )
        return 2
    print(f"saved trained model to {args.save}")
    return 0


def _answer_early(loop: Any, args: argparse.Namespace) -> int | None:
    """Answer from the config and the checkpoint files, before the backend is imported.

    A missing backend, a bad option or a foreign checkpoint raises here; a finished run
    (its checkpoint's config digest equal to this config's) is reported from its meta.
    ``--save`` needs the trained op, so it goes on to the backend (``None``).
    """
    from ._config_digest import config_digest
    from .engine._preflight import preflight

    answer = preflight(loop, config_digest=None if args.save else config_digest(loop))
    if answer is None:
        return None
    info = answer.info()
    _print_summary(info, loop.checkpoint_dir)
    _print_where_to_look(loop, info)
    if args.info_json:
        Path(args.info_json).write_text(json.dumps(info, indent=2, default=str))
    return 0


#: The shell's convention, 128 + the signal number: ``run … && next_step`` stops after an
#: interrupted run, and a scheduler sees a preempted job as preempted, not as done.
INTERRUPTED_EXIT_CODES: dict[str, int] = {"SIGINT": 130, "SIGTERM": 143}


def _resume_command(args: argparse.Namespace) -> str:
    """The ``pipekit-train run`` command line that continues this run (same file, same --set)."""
    words = ["pipekit-train", "run", str(args.loop)]
    for override in args.set or []:
        words += ["--set", override]
    if args.compilation_cache:
        words += ["--compilation-cache", str(args.compilation_cache)]
    return shlex.join(words)


def _print_interrupted(args: argparse.Namespace, info: dict[str, Any], checkpoint_dir: Any) -> None:
    """Say where an interrupted run stopped, what was kept, and the command that resumes it."""
    step = info.get("final_step")
    saved = info.get("last_checkpoint_step")
    if checkpoint_dir is not None and saved is not None:
        kept = f"checkpoint of step {saved} saved in {checkpoint_dir}"
        how = f"resume with: {_resume_command(args)}"
    else:
        kept = "no checkpoint_dir, so nothing was saved"
        how = "set checkpoint_dir (and a Checkpoint callback) to make a run resumable"
    skipped = (
        f"; --save {args.save} skipped (the model is not trained to the end)" if args.save else ""
    )
    print(
        f"pipekit-train: stopped by {info['interrupted']} at step {step}; {kept}{skipped}.\n"
        f"pipekit-train: {how}",
        file=sys.stderr,
    )


def _print_where_to_look(loop: Any, info: dict[str, Any]) -> None:
    """The commands that open what the run wrote: every writer's output and the plots."""
    from .writers import viewing_hints

    lines = viewing_hints(loop, run_dir=info.get("run_dir") or loop.checkpoint_dir)
    sampled = info.get("diagnostics") or info.get("phase") not in (None, "train")
    if sampled and loop.checkpoint_dir is not None:
        folder = Path(loop.checkpoint_dir)
        run = folder.parent if folder.name == "checkpoints" else folder
        lines.append(f"Trace and rank plots: pipekit-train plot {shlex.quote(str(run))}")
    if lines:
        print("see what the run wrote:")
        for line in dict.fromkeys(lines):
            print(f"  {line}")


def _print_summary(info: dict[str, Any], checkpoint_dir: Any = None) -> None:
    """Print the end-of-run summary from ``backend_info``."""
    metrics = info.get("final_metrics") or {}
    resumed, final = info.get("resumed_from_step"), info.get("final_step")
    if resumed is not None and resumed == final:
        where = f" in {checkpoint_dir}" if checkpoint_dir is not None else ""
        shown = ", ".join(f"{k}={metrics[k]:.6g}" for k in sorted(metrics)) or "none recorded"
        report = posterior_report(info)
        if report:
            print(f"run already complete at step {final}{where}; no steps run.")
            print("\n".join(report))
        else:
            print(
                f"run already complete at step {final}{where}; no steps run. final metrics: {shown}"
            )
        if report or info.get("phase") not in (None, "train"):  # a sampler's phases
            print("(use a new checkpoint_dir to sample again with other settings)")
        else:
            print("(raise max_steps, or use a new checkpoint_dir, to train further)")
        return
    print(f"backend: {info.get('backend')}  final_step: {final}  resumed_from_step: {resumed}")
    if info.get("total_seconds") is not None:
        print(f"wall time: {info['total_seconds']:.1f} s")
    report = posterior_report(info)
    if report:
        # A sampler's last-step metrics (one draw's accept_prob, …) say little; the posterior
        # table and the health line say what the run found and whether to trust it.
        if info.get("final_elbo") is not None:
            print(f"final ELBO: {info['final_elbo']:.6g}")
        print("\n".join(report))
        return
    if metrics:
        print("final metrics:")
        for key in sorted(metrics):
            print(f"  {key:>16}: {metrics[key]:.6g}")
    if "val_accuracy" in metrics:
        print(f"val_accuracy (on val_dataset): {metrics['val_accuracy']:.4f}")


def _cmd_backends(args: argparse.Namespace) -> int:
    from .registry import backend_states, distribution_version

    print(f"pipekit-train-core {distribution_version('pipekit-train-core') or '(unknown)'}")
    for b in backend_states():
        if b.state == "installed":
            line = f"{b.name:<14} installed: {b.distribution} {b.version}"
            if b.libraries:
                line += "  (" + ", ".join(f"{k} {v}" for k, v in b.libraries.items()) + ")"
        elif b.state == "placeholder":
            line = (
                f"{b.name:<14} {b.distribution} {b.version} is installed "
                "but provides no backend yet"
            )
        else:
            line = f"{b.name:<14} not installed: {b.install_command}"
        print(line)
    return 0


def _format_table(rows: list[dict[str, Any]]) -> str:
    """``inspect`` rows as an aligned text table (one line per step folder)."""
    header = ("step", "valid", "size", "metrics / error", "path")
    lines = [header]
    for r in rows:
        meta = r.get("meta") or {}
        metrics = meta.get("metrics") or {}
        detail = r["error"] or ", ".join(
            f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
            for k, v in sorted(metrics.items())
        )
        size = f"{r['size_bytes'] / 1024:.1f} KiB"
        lines.append((str(r["step"]), "yes" if r["valid"] else "NO", size, detail, r["path"]))
    widths = [max(len(line[i]) for line in lines) for i in range(len(header) - 1)]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(line[:-1], widths, strict=True))
        + "  "
        + line[-1]
        for line in lines
    )


def _cmd_inspect(args: argparse.Namespace) -> int:
    # Files only (the store kind is told from the folder): no jax or torch import, so any
    # install can list any backend's run folder. ``--verify`` reads every array (jax then).
    from .checkpoints import inspect_checkpoints

    rows = inspect_checkpoints(args.directory, verify=args.verify)
    if not rows:
        raise CheckpointError(
            f"no checkpoints in {args.directory}: expected step folders (such as "
            f"{Path(args.directory) / '500'}) or step files (step-000000500.pt) written by a "
            "TrainingLoop with this checkpoint_dir. Is it the checkpoint_dir of a run that "
            "saved at least once?"
        )
    if args.json:
        print(json.dumps(rows, indent=2, default=str))
    else:
        print(_format_table(rows))
    if not args.verify:
        return 0
    damaged = [r for r in rows if r.get("verified") is False]
    for r in damaged:
        print(f"step {r['step']} is damaged: {r['error']}", file=sys.stderr)
    checked = sum(1 for r in rows if r.get("verified"))
    if damaged:
        print(
            f"pipekit-train inspect --verify: {len(damaged)} damaged step(s) of "
            f"{len(rows)}; a resume falls back past them to the newest intact step.",
            file=sys.stderr,
        )
        return 1
    if not args.json:
        print(f"verified: every array of {checked} step(s) matches its checksum record")
    return 0


class _VersionAction(argparse.Action):
    """``--version``: every installed pipekit-train distribution and its version."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, help=kwargs.get("help"))

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        found = {}
        for dist in metadata.distributions():
            name = dist.metadata["Name"] or ""
            if name.lower().replace("_", "-").startswith("pipekit-train"):
                found[name] = dist.version
        print("\n".join(f"{k} {v}" for k, v in sorted(found.items())) or "pipekit-train (unknown)")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``pipekit-train`` (plain-text help, one example per command)."""
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(
        prog="pipekit-train", description=_DESCRIPTION, epilog=_EPILOG, formatter_class=raw
    )
    parser.add_argument(
        "--version", action=_VersionAction, help="print the installed pipekit-train versions"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser(
        "run", help="run a TrainingLoop YAML file", epilog=_RUN_EPILOG, formatter_class=raw
    )
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
        metavar="DIR|off",
        default=os.environ.get("PIPEKIT_TRAIN_COMPILATION_CACHE"),
        help="JAX persistent compilation cache folder, or 'off' (default: "
        "$PIPEKIT_TRAIN_COMPILATION_CACHE, else $XDG_CACHE_HOME/pipekit-train/jax, "
        "else ~/.cache/pipekit-train/jax)",
    )
    run.set_defaults(func=_cmd_run)
    backends = sub.add_parser(
        "backends",
        help="list every known backend: installed (with versions) or how to install it",
        epilog=_BACKENDS_EPILOG,
        formatter_class=raw,
    )
    backends.set_defaults(func=_cmd_backends)
    inspect = sub.add_parser(
        "inspect",
        help="list the checkpoints in a directory",
        epilog=_INSPECT_EPILOG,
        formatter_class=raw,
    )
    inspect.add_argument("directory", help="a TrainingLoop's checkpoint_dir")
    inspect.add_argument("--json", action="store_true", help="print JSON instead of a table")
    inspect.add_argument(
        "--verify",
        action="store_true",
        help="also read every committed step's arrays and check them against their CRC-32 "
        "records (imports jax for Orbax steps); exit 1 naming each damaged step and array",
    )
    inspect.set_defaults(func=_cmd_inspect)
    from .plot._cli import add_plot_command

    add_plot_command(sub)
    from .sweep._cli import add_sweep_command

    add_sweep_command(sub)
    return parser


def _error_text(exc: PipekitError) -> str:
    """The message of ``exc`` with Python-API hints translated to CLI flags."""
    from ._cli_hints import cli_message
    from .config import _field_names

    return cli_message(str(exc), frozenset(_field_names()))


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: Any = None,
    line: str | None = None,
) -> None:
    """A warning as one line of the command's own output (a source line of the console
    script, where Python would point, tells a shell user nothing)."""
    kind = "" if issubclass(category, UserWarning) else f"{category.__name__}: "
    print(f"pipekit-train: warning: {kind}{message}", file=sys.stderr if file is None else file)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``pipekit-train`` console script."""
    import warnings

    from ._quiet import quiet_library_noise

    args = build_parser().parse_args(argv)
    quiet_library_noise()  # `plot` and `inspect` read checkpoints too
    with warnings.catch_warnings():
        warnings.showwarning = _show_warning
        try:
            return int(args.func(args))
        except PipekitError as exc:
            name = type(exc).__name__
            print(f"pipekit-train: error: {name}: {_error_text(exc)}", file=sys.stderr)
            return 2


if __name__ == "__main__":
    sys.exit(main())
