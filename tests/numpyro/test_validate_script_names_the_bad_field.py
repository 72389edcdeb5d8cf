"""scripts/validate_posteriordb.py: an unknown backend or posterior is a ConfigError naming the
option, raised before anything runs."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from pipekit_train.errors import ConfigError, PipekitError

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "validate_posteriordb.py"


def _script():
    spec = importlib.util.spec_from_file_location("validate_posteriordb", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("argv", "field"),
    [
        (["--backends", "mcmc,nuts"], "--backends"),
        (["--posteriors", "eight_schools"], "--posteriors"),
    ],
)
def test_unknown_names_raise_config_error_naming_the_option(
    tmp_path: Path, argv: list[str], field: str
) -> None:
    with pytest.raises(ConfigError) as err:
        _script().main([*argv, "--out", str(tmp_path / "v.md")])
    assert isinstance(err.value, PipekitError) and err.value.field == field
    assert not (tmp_path / "v.md").exists()
