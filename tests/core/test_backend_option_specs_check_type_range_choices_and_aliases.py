"""Core's one ``backend_options`` parser: a spec's type, range, choices, aliases and check
decide, every refusal a ``ConfigError`` naming ``backend_options.<key>``; unknown keys get the
plausible name, or are handed back when the backend passes them through."""

from __future__ import annotations

import pytest

from pipekit_train.engine import (
    RESUME_OPTION,
    OptionSpec,
    options_markdown,
    parse_backend_options,
)
from pipekit_train.errors import ConfigError

SPECS = (
    OptionSpec("steps", "int", 10, "steps per call", low=1),
    OptionSpec("rate", "float", 0.5, "a rate", low=0, high=1, low_open=True, high_open=True),
    OptionSpec("depth", "int", 4, "depth", low=1, aliases=("max_depth",)),
    OptionSpec("flag", "bool", True, "a flag"),
    OptionSpec("even", "int", 2, "an even number", check=lambda v: v if v % 2 == 0 else 1 / 0),
    OptionSpec("odd", "int", 1, "odd", check=lambda v: v if v % 2 else _no("an odd integer")),
    RESUME_OPTION,
)


def _no(what: str) -> int:
    raise ValueError(what)


def _refused(raw: dict, field: str, *words: str, keep: bool = False) -> str:
    with pytest.raises(ConfigError) as info:
        parse_backend_options(raw, SPECS, backend="toy", keep_unknown=keep)
    assert info.value.field == field
    msg = str(info.value)
    assert field in msg
    for w in words:
        assert w in msg, msg
    return msg


def test_defaults_and_given_values() -> None:
    parsed = parse_backend_options({"rate": 1 / 4, "max_depth": 7}, SPECS, backend="toy")
    assert parsed.values == {
        "steps": 10,
        "rate": 0.25,
        "depth": 7,
        "flag": True,
        "even": 2,
        "odd": 1,
        "resume": "auto",
    }
    assert parsed.given == {"rate", "depth"} and parsed.rest == {}


@pytest.mark.parametrize(
    ("raw", "field", "words"),
    [
        ({"steps": 0}, "backend_options.steps", "an integer >= 1"),
        ({"steps": True}, "backend_options.steps", "an integer >= 1"),
        ({"rate": 1.0}, "backend_options.rate", "a number in (0, 1)"),
        ({"rate": float("nan")}, "backend_options.rate", "(0, 1)"),
        ({"flag": "yes"}, "backend_options.flag", "true or false"),
        ({"resume": "Force"}, "backend_options.resume", "did you mean 'force'"),
        ({"odd": 2}, "backend_options.odd", "an odd integer"),
        ({"stepz": 3}, "backend_options.stepz", "did you mean 'steps'?); known: steps"),
        ({"max_depth": 3, "depth": 4}, "backend_options.depth", "two names"),
    ],
)
def test_refusals_name_the_key(raw: dict, field: str, words: str) -> None:
    _refused(raw, field, words)


def test_a_check_raising_something_else_is_not_swallowed() -> None:
    with pytest.raises(ZeroDivisionError):
        parse_backend_options({"even": 3}, SPECS, backend="toy")


def test_unknown_keys_are_handed_back_when_kept() -> None:
    parsed = parse_backend_options(
        {"precision": "bf16", "steps": 2}, SPECS, backend="toy", keep_unknown=True
    )
    assert parsed.rest == {"precision": "bf16"} and parsed["steps"] == 2


def test_not_a_mapping() -> None:
    with pytest.raises(ConfigError) as info:
        parse_backend_options([("steps", 1)], SPECS, backend="toy")  # type: ignore[arg-type]
    assert info.value.field == "backend_options"


def test_the_reference_page_lists_every_spec() -> None:
    page = options_markdown([("toy", SPECS, "a note")], title="T", intro="I")
    for spec in SPECS:
        assert f"| `{spec.name}`" in page
    assert "`max_depth`" in page and "a note" in page
