"""The one decision every op load uses: may a recorded import string be resolved?

``False`` (the default) refuses everything before importing; ``True`` allows all; a list
of prefixes allows whole dotted components only (``mypkg`` covers ``mypkg.models``, not
``mypkg_evil``). A bare string or a malformed prefix is a ``ConfigError``.
"""

from __future__ import annotations

import pytest

from pipekit_train._trust import check_trust, is_trusted, resolve_recorded
from pipekit_train.errors import CheckpointError, ConfigError, UntrustedCodeError


@pytest.mark.parametrize(
    ("ref", "trusted", "allowed"),
    [
        ("mypkg.models:make", False, False),
        ("mypkg.models:make", True, True),
        ("mypkg.models:make", ["mypkg"], True),
        ("mypkg:make", ["mypkg"], True),
        ("mypkg_evil:make", ["mypkg"], False),
        ("mypkg.models:make", ["mypkg.models.sub"], False),
        ("os:system", ["mypkg", "torch"], False),
    ],
)
def test_is_trusted(ref, trusted, allowed):
    assert is_trusted(ref, check_trust(trusted)) is allowed


@pytest.mark.parametrize("bad", ["mypkg", "True", [1], ["not a module"], None, 1])
def test_bad_trusted_is_config_error(bad):
    with pytest.raises(ConfigError, match="trusted must be"):
        check_trust(bad)


def test_untrusted_is_refused_naming_field_string_and_both_fixes():
    with pytest.raises(UntrustedCodeError) as info:
        resolve_recorded(
            "os:system", trusted=False, field="factory", source="x/op.json", instead="f(factory=)"
        )
    message = str(info.value)
    assert "x/op.json" in message and "'factory'" in message and "'os:system'" in message
    assert "f(factory=)" in message and "trusted=True" in message and "trusted=['os']" in message


def test_trusted_resolves_and_a_bad_record_is_a_checkpoint_error():
    import os.path

    assert (
        resolve_recorded("os.path:join", trusted=["os"], field="f", source="s", instead="i")
        is os.path.join
    )
    for bad in ("os.path.join", "os:", 3):
        with pytest.raises(CheckpointError, match="import string"):
            resolve_recorded(bad, trusted=True, field="f", source="s", instead="i")
    with pytest.raises(CheckpointError, match="cannot be imported"):
        resolve_recorded("os:no_such_attr", trusted=True, field="f", source="s", instead="i")
