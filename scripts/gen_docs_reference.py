"""Generate the documentation's reference pages from the code (run by mkdocs-gen-files).

Nothing here is copied by hand: the YAML reference comes from
``dataclasses.fields(TrainingLoop)`` and the ``Args:`` section of its docstring,
the callbacks reference from ``BUILTIN_CALLBACKS`` (fields, docstrings, YAML
forms), the writer table from ``pipekit_train.writers``, and the errors page
from the ``PipekitError`` hierarchy in ``pipekit_train.errors`` plus messages
produced by really making each mistake. A field added to ``TrainingLoop``
appears on the site at the next build.

Run directly (``python scripts/gen_docs_reference.py OUT_DIR``) it writes the
pages into ``OUT_DIR`` instead, for a look without mkdocs.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

import yaml

from pipekit_train import errors as errors_module
from pipekit_train.callbacks import BUILTIN_CALLBACKS, LogToExperiment
from pipekit_train.loop import TrainingLoop
from pipekit_train.writers import WRITER_KINDS, default_location

PAGES: dict[str, Callable[[TextIO], None]] = {}


def page(path: str) -> Callable[[Callable[[TextIO], None]], Callable[[TextIO], None]]:
    def register(fn: Callable[[TextIO], None]) -> Callable[[TextIO], None]:
        PAGES[path] = fn
        return fn

    return register


def docstring_args(obj: Any) -> dict[str, str]:
    """``{name: description}`` from the Google-style ``Args:`` section of ``obj``'s docstring."""
    doc = inspect.cleandoc(obj.__doc__ or "")
    match = re.search(r"^Args:\n((?:[ \t]+.*\n?|\n)+)", doc, flags=re.M)
    if not match:
        return {}
    out: dict[str, str] = {}
    current = None
    for line in match.group(1).splitlines():
        entry = re.match(r"^    (\w+): (.*)$", line)
        if entry:
            current = entry.group(1)
            out[current] = entry.group(2).strip()
        elif current and line.strip():
            out[current] += " " + line.strip()
    return out


def summary(obj: Any) -> str:
    """The docstring without its ``Args:`` section."""
    doc = inspect.cleandoc(obj.__doc__ or "")
    return re.split(r"^Args:\n", doc, flags=re.M)[0].strip()


def cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def default_of(f: dataclasses.Field[Any]) -> str:
    if f.default is not dataclasses.MISSING:
        value = f.default
    elif f.default_factory is not dataclasses.MISSING:
        value = f.default_factory()
    else:
        return "required"
    return f"`{value!r}`"


@page("reference/yaml.md")
def yaml_reference(out: TextIO) -> None:
    out.write("# YAML reference: `TrainingLoop` fields\n\n")
    out.write(
        "Generated from `dataclasses.fields(TrainingLoop)` and its docstring at build time. "
        "A YAML file holds these keys (`TrainingLoop.from_yaml(path)`, "
        "`pipekit-train run FILE`); objects are `'module:factory'` strings or "
        "`{factory: 'module:factory', kwargs: {…}}`.\n\n"
    )
    out.write(summary(TrainingLoop) + "\n\n")
    described = docstring_args(TrainingLoop)
    out.write("| field | type | default | meaning |\n|---|---|---|---|\n")
    for f in dataclasses.fields(TrainingLoop):
        out.write(
            f"| `{f.name}` | `{cell(str(f.type))}` | {cell(default_of(f))} | "
            f"{cell(described.get(f.name, ''))} |\n"
        )
    out.write("\n## Writers (`metric_writer`)\n\n")
    out.write(
        "A name, or a list of names, writes to the run folder — `checkpoint_dir`, or "
        "`runs/<backend>-<UTC time>` without one — at these default locations "
        "(shown for `checkpoint_dir: runs/exp1`):\n\n"
    )
    out.write("| name | default location | explicit form |\n|---|---|---|\n")
    for kind in WRITER_KINDS:
        location = default_location(kind, "runs/exp1")
        if kind == "mlflow":
            location = "file://<absolute>/runs/exp1/logs/mlflow"
        explicit = "'mlflow:TRACKING_URI'" if kind == "mlflow" else f"'{kind}:PATH'"
        out.write(f"| `{kind}` | `{location}` | `{explicit}` |\n")
    out.write("\n## A complete example\n\n")
    example = TrainingLoop(
        model_op="mymodels:make_mlp",
        dataset="mydata:train_split",
        val_dataset="mydata:test_split",
        loss="cross_entropy",
        eval_every_n_steps=500,
        checkpoint_dir="runs/exp1",
        metric_writer=["tensorboard", "jsonl"],
        callbacks=[BUILTIN_CALLBACKS["Checkpoint"](), BUILTIN_CALLBACKS["EarlyStopping"]()],
    )
    out.write("```yaml\n" + example.to_yaml() + "```\n")


def init_fields(cls: type) -> list[dataclasses.Field[Any]]:
    if not dataclasses.is_dataclass(cls):
        return []
    return [f for f in dataclasses.fields(cls) if f.init and not f.name.startswith("_")]


@page("reference/callbacks.md")
def callbacks_reference(out: TextIO) -> None:
    out.write("# Built-in callbacks\n\n")
    out.write(
        "Generated from `pipekit_train.callbacks.BUILTIN_CALLBACKS`. In YAML a built-in is "
        "written `{Name: {argument: value}}` (or just `Name` for the defaults). The order "
        "they run in is described in [Callbacks and their order](../callbacks.md).\n\n"
    )
    for name, cls in BUILTIN_CALLBACKS.items():
        out.write(f"## `{name}`\n\n{summary(cls)}\n\n")
        fields = init_fields(cls)
        if fields:
            out.write("| argument | type | default |\n|---|---|---|\n")
            for f in fields:
                out.write(f"| `{f.name}` | `{cell(str(f.type))}` | {cell(default_of(f))} |\n")
            out.write("\n")
        out.write("YAML form of the defaults:\n\n")
        out.write("```yaml\n" + yaml.safe_dump([cls().to_config()], sort_keys=False) + "```\n\n")
    out.write(f"## `LogToExperiment`\n\n{summary(LogToExperiment)}\n\n")
    out.write(
        "It is not written in YAML: the loop's `metric_writer` is wrapped in one and run "
        "first at every event.\n"
    )


def hierarchy(base: type, depth: int = 0) -> Iterator[tuple[int, type]]:
    yield depth, base
    for sub in base.__subclasses__():
        if sub.__module__ == errors_module.__name__:
            yield from hierarchy(sub, depth + 1)


@contextmanager
def captured(examples: list[tuple[str, str]], what: str) -> Iterator[None]:
    try:
        yield
    except errors_module.PipekitError as exc:
        examples.append((what, f"{type(exc).__name__}: {exc}"))
    else:  # pragma: no cover - the mistake must be reported
        raise AssertionError(f"no error for: {what}")


@contextmanager
def _without_entry_point(name: str) -> Iterator[None]:
    """The registry as on a machine without ``name``'s distribution (the docs build installs
    every backend, so a missing one is shown by leaving its entry point out)."""
    from pipekit_train import registry

    real = registry._entry_points
    registry._entry_points = lambda: [ep for ep in real() if ep.name != name]  # type: ignore[assignment]
    try:
        yield
    finally:
        registry._entry_points = real  # type: ignore[assignment]


def example_messages() -> list[tuple[str, str]]:
    """Real messages, from really making each mistake (pure core, no backend needed)."""
    from pipekit_train.plot import plot
    from pipekit_train.registry import load_backend

    base: dict[str, Any] = {"dataset": "mydata:train", "loss": "cross_entropy"}
    examples: list[tuple[str, str]] = []
    with captured(examples, "`batch_size: 0`"):
        TrainingLoop(**base, batch_size=0)
    with captured(examples, "a misspelt loss name"):
        TrainingLoop(dataset="mydata:train", loss="crossentropy")
    with captured(examples, "a misspelt optimiser name"):
        TrainingLoop(**base, optimizer_config={"name": "adamm", "lr": 1e-3})
    with captured(examples, "a misspelt writer name"):
        TrainingLoop(**base, metric_writer="tensorbord")
    with captured(examples, "a file name given as a writer"):
        TrainingLoop(**base, metric_writer="metrics.jsonl")
    with captured(examples, "`eval_every_n_steps` without `val_dataset`"):
        TrainingLoop(**base, eval_every_n_steps=100)
    with captured(examples, "an unknown backend"):
        TrainingLoop(**base, backend="jaxx")
    with captured(examples, "a backend that is not installed"), _without_entry_point("keras"):
        load_backend("keras")
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        empty = Path(tmp) / "runs" / "exp1"
        empty.mkdir(parents=True)
        with captured(examples, "plotting a folder with no logs"):
            plot(empty)
    return [(what, message.replace(str(empty), "runs/exp1")) for what, message in examples]


@page("reference/errors.md")
def errors_reference(out: TextIO) -> None:
    out.write("# Errors and their fixes\n\n")
    out.write(summary(errors_module) + "\n\n")
    out.write(
        "Generated from `pipekit_train.errors`: every class below is a `PipekitError`, so "
        "`except pipekit_train.PipekitError` catches any of them, and also the builtin in "
        "its bases. The CLI prints `pipekit-train: error: <Class>: <message>` and exits 2.\n\n"
    )
    out.write("## The hierarchy\n\n")
    for depth, cls in hierarchy(errors_module.PipekitError):
        builtins = [b.__name__ for b in cls.__mro__[1:] if b.__module__ == "builtins"]
        extra = [b for b in builtins if b not in ("Exception", "BaseException", "object")]
        also = f" (also `{'`, `'.join(extra)}`)" if extra else ""
        first = summary(cls).split("\n\n")[0].replace("\n", " ")
        out.write(f"{'    ' * depth}- **`{cls.__name__}`**{also}: {first}\n")
    out.write("\n## What the messages look like\n\n")
    out.write(
        "Each message names the field (or folder) and the fix. These were produced while "
        "building this page, by making each mistake:\n\n"
    )
    for what, message in example_messages():
        out.write(f"**{what}**\n\n```text\n{message}\n```\n\n")


# distribution → its adapter packages, in the order of the page
BACKEND_PACKAGES: dict[str, list[str]] = {
    "pipekit-train-equinox": ["equinox"],
    "pipekit-train-bayes": ["bayes"],
    "pipekit-train-numpyro": ["numpyro_svi", "numpyro_mcmc"],
    "pipekit-train-blackjax": ["blackjax"],
    "pipekit-train-lightning": ["lightning"],
    "pipekit-train-keras": ["keras"],
}
ROOT = Path(__file__).resolve().parents[1]


def public_names(package: str) -> list[tuple[str, str]]:
    """``(name, defining module)`` of each name in an adapter package's ``__all__``.

    Read from the package's ``__init__.py`` without importing it (no jax, torch or keras
    at build time): ``from .mod import name`` gives the defining module (also under
    ``if TYPE_CHECKING:``, where Lightning's lazy names are); a name defined in the
    ``__init__`` itself is documented there.
    """
    import ast

    dist = next(d for d, pkgs in BACKEND_PACKAGES.items() if package in pkgs)
    folder = dist.removeprefix("pipekit-train-")
    init = ROOT / "packages" / folder / "src" / "pipekit_train" / "adapters" / package
    tree = ast.parse((init / "__init__.py").read_text(encoding="utf-8"))
    here = f"pipekit_train.adapters.{package}"
    source: dict[str, str] = {}
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            base = f"{here}.{module}" if node.level == 1 else module
            for alias in node.names:
                source.setdefault(alias.asname or alias.name, base.rstrip("."))
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            names = [ast.literal_eval(e) for e in node.value.elts]  # type: ignore[attr-defined]
    return [(name, source.get(name, here)) for name in names]


@page("reference/api-backends.md")
def backends_api_reference(out: TextIO) -> None:
    out.write("# Python API: the backends\n\n")
    out.write(
        "Every name each backend distribution exports (its `__all__`), from the docstrings. "
        "Generated at each build from the packages' `__init__.py`, so a new export appears "
        "here without editing this page. Core's API is on [the core page](api.md). A "
        "backend's `run(loop)` is what `TrainingLoop.run()` calls; use the loop.\n\n"
    )
    for dist, packages in BACKEND_PACKAGES.items():
        out.write(f"## {dist}\n\n")
        for package in packages:
            out.write(f"### `pipekit_train.adapters.{package}`\n\n")
            for name, module in public_names(package):
                out.write(f"::: {module}.{name}\n    options:\n      heading_level: 4\n\n")


def write_into(root: Path) -> None:
    """``python scripts/gen_docs_reference.py OUT_DIR``: the pages as files, without mkdocs."""
    for path, write in PAGES.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("w", encoding="utf-8") as fh:
            write(fh)


def generate() -> None:
    """Under mkdocs-gen-files: the pages as virtual files of the site."""
    import mkdocs_gen_files

    for path, write in PAGES.items():
        with mkdocs_gen_files.open(path, "w") as fh:
            write(fh)


if __name__ == "__main__":
    write_into(Path(sys.argv[1]))
else:
    generate()
