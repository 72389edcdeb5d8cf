"""Declarative ``backend_options``: each backend lists its options once, one parser checks them.

A backend declares an :class:`OptionSpec` per key (type, range or choices, default, doc,
the other libraries' spellings it accepts) and calls :func:`parse_backend_options` before
anything compiles. Every refusal is a ``ConfigError`` naming ``backend_options.<key>``, saying
what the key takes and, for a misspelt key or choice, the plausible name (``errors.closest``).
The same specs write the options reference page (:func:`options_markdown`), so the page
cannot drift from what is checked.

Pure Python: a spec whose check needs a library (a Keras callback's type, a Lightning
strategy's name) passes a ``check`` callable that imports it when called.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pipekit_train.errors import ConfigError, closest

from ._resume import RESUME_MODES

__all__ = [
    "OptionSpec",
    "ParsedOptions",
    "parse_backend_options",
    "options_markdown",
    "RESUME_OPTION",
    "compilation_cache_option",
    "optimizer_id_option",
    "num_data_option",
    "require_instances",
    "resolve_aliases",
]

#: What ``kind`` may be: the type a value must have (``"any"``: only ``check`` decides).
KINDS = ("int", "float", "bool", "choice", "str", "path", "mapping", "list", "any")


@dataclass(frozen=True)
class OptionSpec:
    """One ``backend_options`` key.

    Attributes:
        name: the canonical key (the spelling ``backend_info`` and the docs use).
        kind: ``int`` / ``float`` / ``bool`` / ``choice`` / ``str`` / ``path`` (a folder,
            or ``"off"``) / ``mapping`` / ``list`` / ``any``.
        default: the value when the key is absent (not checked).
        doc: one line for the reference page and the unknown-key message.
        low, high: the allowed range of a number; ``low_open`` / ``high_open`` exclude the
            bound itself.
        choices: the allowed values of a ``choice``.
        optional: ``None`` is accepted as well (it means "unset").
        aliases: another library's spellings of the same option, renamed to ``name``.
        check: called with the (type-checked) value; returns the value to keep. It raises
            ``ValueError(what the key takes)`` for a bad value, or a ``ConfigError`` of its
            own.
        what: how the reference page and the messages describe the accepted values
            (derived from kind, range and choices when empty).
    """

    name: str
    kind: str
    default: Any = None
    doc: str = ""
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    choices: tuple[Any, ...] = ()
    optional: bool = False
    aliases: tuple[str, ...] = ()
    check: Callable[[Any], Any] | None = field(default=None, compare=False)
    what: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"OptionSpec {self.name!r}: kind {self.kind!r} not in {KINDS}")

    def describe(self) -> str:
        """What the key takes, in words (``"an integer >= 1"``)."""
        if self.what:
            return self.what
        text = {
            "int": "an integer",
            "float": "a number",
            "bool": "true or false",
            "str": "a non-empty string",
            "path": "a folder path, or 'off'",
            "mapping": "a mapping",
            "list": "a list",
            "any": "a value",
            "choice": "one of " + ", ".join(repr(c) for c in self.choices),
        }[self.kind]
        if self.kind in ("int", "float"):
            text += _range_text(self)
        if self.optional:
            text += " (or unset)"
        return text

    def with_default(self, default: Any, doc: str | None = None) -> OptionSpec:
        """The same option with another backend's default (and doc)."""
        return replace(self, default=default, doc=self.doc if doc is None else doc)


def _range_text(spec: OptionSpec) -> str:
    low, high = spec.low, spec.high
    if low is not None and high is not None:
        left = "(" if spec.low_open else "["
        right = ")" if spec.high_open else "]"
        return f" in {left}{low:g}, {high:g}{right}"
    if low is not None:
        return f" {'>' if spec.low_open else '>='} {low:g}"
    if high is not None:
        return f" {'<' if spec.high_open else '<='} {high:g}"
    return ""


def _in_range(spec: OptionSpec, value: float) -> bool:
    if spec.low is not None and (value <= spec.low if spec.low_open else value < spec.low):
        return False
    return not (
        spec.high is not None and (value >= spec.high if spec.high_open else value > spec.high)
    )


def _typed(spec: OptionSpec, value: Any) -> bool:
    """Whether ``value`` has the spec's type (and range, for numbers)."""
    kind = spec.kind
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool) and _in_range(spec, value)
    if kind == "float":
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        return number and value == value and _in_range(spec, float(value))
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "choice":
        return any(value == c and type(value) is type(c) for c in spec.choices)
    if kind == "str":
        return isinstance(value, str) and bool(value.strip())
    if kind == "path":
        return isinstance(value, (str, os.PathLike))
    if kind == "mapping":
        return isinstance(value, Mapping)
    if kind == "list":
        return isinstance(value, (list, tuple))
    return True


def check_value(spec: OptionSpec, value: Any) -> Any:
    """``value`` checked against ``spec`` (``float`` kinds come back as ``float``)."""
    where = f"backend_options.{spec.name}"
    if value is None and spec.optional:
        return None
    if not _typed(spec, value):
        hint = ""
        if spec.kind == "choice" and isinstance(value, str):
            hint = closest(value, [str(c) for c in spec.choices])
        raise ConfigError(f"{where} must be {spec.describe()}, got {value!r}{hint}", field=where)
    if spec.kind == "float":
        value = float(value)
    if spec.check is not None:
        try:
            value = spec.check(value)
        except ConfigError:
            raise
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"{where} must be {exc}, got {value!r}", field=where) from exc
    return value


@dataclass
class ParsedOptions:
    """The checked values by canonical name, and the keys no spec claimed (``rest``,
    only when the caller keeps them: Lightning's ``Trainer`` pass-through)."""

    values: dict[str, Any]
    rest: dict[str, Any]
    given: frozenset[str]

    def __getitem__(self, name: str) -> Any:
        return self.values[name]


def resolve_aliases(
    raw: Mapping[str, Any], aliases: Mapping[str, str], backend: str
) -> dict[str, Any]:
    """``raw`` with every alias (``alias → canonical``) renamed (a new dict); an alias and its
    canonical name both given with different values is a ``ConfigError`` naming both."""
    out = dict(raw)
    for alias, canonical in aliases.items():
        if alias not in out:
            continue
        value = out.pop(alias)
        if canonical in out and out[canonical] != value:
            raise ConfigError(
                f"backend_options.{alias} ({value!r}) and backend_options.{canonical} "
                f"({out[canonical]!r}) are one option of {backend} under two names, with "
                f"different values; give only {canonical}",
                field=f"backend_options.{canonical}",
            )
        out[canonical] = value
    return out


def _known_text(specs: Sequence[OptionSpec]) -> str:
    text = "; ".join(f"{s.name}: {s.doc}" if s.doc else s.name for s in specs)
    aliases = [f"{a} for {s.name}" for s in specs for a in s.aliases]
    if aliases:
        text += f" (also accepted: {', '.join(aliases)})"
    return text


def parse_backend_options(
    raw: Mapping[str, Any] | None,
    specs: Sequence[OptionSpec],
    *,
    backend: str,
    keep_unknown: bool = False,
) -> ParsedOptions:
    """Check ``backend_options`` against ``specs``; every refusal a ``ConfigError`` naming
    ``backend_options.<key>``.

    Aliases are renamed first (an alias and its canonical name with different values is an
    error naming both). An unknown key is refused with the plausible name and the known
    ones, unless ``keep_unknown`` (then it is returned in ``rest`` for the backend to check).
    """
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise ConfigError(
            f"backend_options must be a mapping of option names to values, got "
            f"{type(raw).__name__}",
            field="backend_options",
        )
    for key in raw:
        if not isinstance(key, str):
            raise ConfigError(
                f"backend_options keys must be option names (strings), got {key!r}",
                field="backend_options",
            )
    resolved = resolve_aliases(raw, {a: s.name for s in specs for a in s.aliases}, backend)
    by_name = {s.name: s for s in specs}
    rest: dict[str, Any] = {}
    for key, value in resolved.items():
        if key in by_name:
            continue
        if keep_unknown:
            rest[key] = value
            continue
        names = [*by_name, *(a for s in specs for a in s.aliases)]
        raise ConfigError(
            f"backend_options.{key}: unknown key {key!r} for the {backend} backend"
            f"{closest(key, names)}; known: {_known_text(specs)}",
            field=f"backend_options.{key}",
        )
    values = {
        s.name: check_value(s, resolved[s.name]) if s.name in resolved else s.default for s in specs
    }
    return ParsedOptions(values=values, rest=rest, given=frozenset(resolved) - set(rest))


def require_instances(
    items: Iterable[Any], base: type, *, key: str, what: str, hint: str
) -> list[Any]:
    """``items`` as a list, each an instance of ``base`` (a library's callback class, say,
    spelt ``what`` for the user), else a ``ConfigError`` naming ``backend_options.<key>[i]``
    with ``hint``."""
    out = list(items)
    for i, item in enumerate(out):
        if not isinstance(item, base):
            where = f"backend_options.{key}[{i}]"
            raise ConfigError(
                f"{where} is a {type(item).__name__}, not a {what} ({hint})",
                field=where,
            )
    return out


#: The resume option of every backend: the policy lives in core (``engine/_resume.py``).
RESUME_OPTION = OptionSpec(
    "resume",
    "choice",
    "auto",
    "what a run finds in checkpoint_dir: 'auto' resumes a compatible checkpoint (else "
    "CheckpointError), 'force' resumes even if the resume guard disagrees, 'never' archives "
    "it and starts fresh",
    choices=RESUME_MODES,
)


def compilation_cache_option() -> OptionSpec:
    """``compilation_cache``: JAX's persistent compilation cache folder (the JAX backends)."""
    return OptionSpec(
        "compilation_cache",
        "path",
        None,
        "JAX persistent compilation cache folder, or 'off'; the CLI sets a default",
        optional=True,
    )


def draws_per_call_option(default: int = 100) -> OptionSpec:
    """``steps_per_call`` of a sampler whose step compiles slowly: one scan length compiles
    (``run_program`` cuts it to the loop's regular chunk, decision 0216)."""
    return OptionSpec(
        "steps_per_call",
        "int",
        default,
        "draws per compiled call at most: one scan compiles (in a run of 20 chunks or more "
        "cut to the event cadences' common divisor), other chunks run as single draws",
        low=1,
        what="an integer >= 1",
    )


def num_data_option() -> OptionSpec:
    """``num_data``: the dataset size N that scales a minibatch likelihood (a stream needs it)."""
    return OptionSpec(
        "num_data",
        "int",
        None,
        "the dataset size N that scales each minibatch's likelihood; required with a "
        "streaming dataset, checked against map-style data",
        low=1,
        optional=True,
        what="a positive integer (the dataset's rows)",
    )


def optimizer_id_option() -> OptionSpec:
    """``optimizer_id``: the name of a user's own optax object for the resume guard."""
    return OptionSpec(
        "optimizer_id",
        "str",
        None,
        "a name for your own optax object in optimizer_config, recorded by the resume guard",
        optional=True,
        what="a non-empty string naming your optax object",
    )


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def options_markdown(
    backends: Iterable[tuple[str, Sequence[OptionSpec], str]], *, title: str, intro: str
) -> str:
    """The options reference page: one table per backend, ``(name, specs, note)`` each."""
    lines = [f"# {title}", "", intro.strip(), ""]
    for name, specs, note in backends:
        lines += [f"## `{name}`", ""]
        if note:
            lines += [note.strip(), ""]
        lines += ["| option | takes | default | what |", "|---|---|---|---|"]
        for s in specs:
            key = f"`{s.name}`" + (
                " (also " + ", ".join(f"`{a}`" for a in s.aliases) + ")" if s.aliases else ""
            )
            lines.append(f"| {key} | {_cell(s.describe())} | `{s.default!r}` | {_cell(s.doc)} |")
        lines.append("")
    return "\n".join(lines)
