"""``backend_options`` the Equinox backend does not understand: ConfigError before compiling."""

from __future__ import annotations

import pytest
from _eqx_helpers import run_loop, tiny_loop, watch_compilation

from pipekit_train import ConfigError


def _raises(monkeypatch, options) -> ConfigError:
    with watch_compilation(monkeypatch) as watch:
        with pytest.raises(ConfigError) as info:
            run_loop(tiny_loop(backend_options=options))
    assert not watch.anything
    return info.value


def test_unknown_key_suggests_the_closest(monkeypatch):
    err = _raises(monkeypatch, {"step_per_call": 4})
    assert err.field == "backend_options.step_per_call"
    msg = str(err)
    assert "'step_per_call'" in msg and "did you mean 'steps_per_call'" in msg
    assert "equinox" in msg and "worker_count" in msg  # lists what is known


def test_unknown_key_without_close_match_lists_known_keys(monkeypatch):
    err = _raises(monkeypatch, {"trainer_kwargs": {}})
    assert "'trainer_kwargs'" in str(err) and "steps_per_call" in str(err) and "resume" in str(err)


@pytest.mark.parametrize("value", [0, -1, 2.0, "7", True, None])
def test_bad_steps_per_call(monkeypatch, value):
    err = _raises(monkeypatch, {"steps_per_call": value})
    assert err.field == "backend_options.steps_per_call"
    assert "integer >= 1" in str(err) and repr(value) in str(err)


@pytest.mark.parametrize("value", [-1, 1.5, "2", False])
def test_bad_worker_count(monkeypatch, value):
    err = _raises(monkeypatch, {"worker_count": value})
    assert err.field == "backend_options.worker_count"
    assert "integer >= 0" in str(err)


@pytest.mark.parametrize("value", ["sometimes", "", None, True, "Auto"])
def test_bad_resume(monkeypatch, value):
    err = _raises(monkeypatch, {"resume": value})
    assert err.field == "backend_options.resume"
    msg = str(err)
    assert "'auto'" in msg and "'never'" in msg and "'force'" in msg


@pytest.mark.parametrize("key", ["shuffle", "async_checkpointing"])
def test_bad_boolean_options(monkeypatch, key):
    err = _raises(monkeypatch, {key: "yes"})
    assert err.field == f"backend_options.{key}"
    assert "true or false" in str(err)


def test_backend_options_must_be_a_dict():
    with pytest.raises(ConfigError) as info:
        tiny_loop(backend_options=[("steps_per_call", 4)])
    assert info.value.field == "backend_options"


def test_compilation_cache_of_the_wrong_type(monkeypatch):
    err = _raises(monkeypatch, {"compilation_cache": 5})
    assert err.field == "backend_options.compilation_cache"
    assert "folder" in str(err)


def test_compilation_cache_that_cannot_be_created(monkeypatch, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    err = _raises(monkeypatch, {"compilation_cache": str(blocker / "cache")})
    assert err.field == "backend_options.compilation_cache"
    assert str(blocker / "cache") in str(err)
