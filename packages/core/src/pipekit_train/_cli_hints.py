"""Rewrite error hints written for Python users into the CLI's own terms.

Errors are raised in the words of the Python API: ``backend_options={"resume":
"force"}``, ``TrainingLoop.batch_size``. A user of ``pipekit-train run`` fixes
them in the YAML file or with ``--set``, so the CLI prints the same message
with those hints translated. The translation is textual (a regex over the
message), so it works for every backend's errors without each backend knowing
about the CLI.
"""

from __future__ import annotations

import ast
import re
import shlex

__all__ = ["cli_message"]

# ``field={...}`` where field is a TrainingLoop field and {...} a flat dict literal.
_DICT_HINT = re.compile(r"\b([a-z_]+)=(\{[^{}]*\})")
# ``TrainingLoop.field`` (optionally followed by ``.key`` parts).
_FIELD_MENTION = re.compile(r"\bTrainingLoop\.([a-z_]+(?:\.[A-Za-z_][A-Za-z0-9_]*)*)")


def _yaml_scalar(value: object) -> str:
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    return str(value)


def _set_flags(field: str, literal: str) -> str | None:
    try:
        value = ast.literal_eval(literal)
    except (ValueError, SyntaxError):
        return None
    if not isinstance(value, dict) or not value:
        return None
    if any(isinstance(v, (dict, list, tuple)) for v in value.values()):
        return None
    return " ".join(
        "--set " + shlex.quote(f"{field}.{k}={_yaml_scalar(v)}") for k, v in value.items()
    )


def cli_message(message: str, fields: frozenset[str] | set[str]) -> str:
    """``message`` with Python-API hints rewritten as ``--set`` flags / YAML fields.

    ``fields`` are the ``TrainingLoop`` field names; only hints about them are
    rewritten, so unrelated ``name={...}`` text is left alone.
    """

    def dict_hint(match: re.Match[str]) -> str:
        field, literal = match.group(1), match.group(2)
        if field not in fields:
            return match.group(0)
        flags = _set_flags(field, literal)
        return flags if flags is not None else match.group(0)

    mentioned: list[str] = []

    def field_mention(match: re.Match[str]) -> str:
        path = match.group(1)
        if path.split(".", 1)[0] not in fields:
            return match.group(0)
        if path not in mentioned:
            mentioned.append(path)
        return path

    out = _FIELD_MENTION.sub(field_mention, _DICT_HINT.sub(dict_hint, message))
    if mentioned:
        out += (
            f"\n(fix {mentioned[0]} in the YAML file, or on the command line with "
            f"--set {mentioned[0]}=VALUE)"
        )
    return out
