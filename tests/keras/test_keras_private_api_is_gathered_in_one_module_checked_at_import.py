"""The Keras internals the keras backend uses are reached only through ``_private``, which
checks at import that the installed Keras still has each one and, when one is gone, names
the Keras version and what it lacks (not an ``AttributeError`` inside ``fit``)."""

from __future__ import annotations

import re
from pathlib import Path

import keras
import pytest

import pipekit_train.adapters.keras as keras_backend
from pipekit_train.adapters.keras import _private
from pipekit_train.errors import BackendNotInstalledError

PACKAGE = Path(keras_backend.__file__).parent
# A private attribute of another object than self: `obj._name`, or getattr(obj, "_name").
PRIVATE_USE = re.compile(
    r"(?<![\w.])(?!self\b)(?!cls\b)[A-Za-z_]\w*\.(_[a-z][a-z0-9_]*)\b"
    r"|(?:getattr|setattr|hasattr|delattr)\([^,]+,\s*[\"'](_[a-z][a-z0-9_]*)[\"']"
)


def test_the_installed_keras_has_every_private_attribute_used() -> None:
    assert _private.missing_private_api(keras) == []


def test_no_other_module_of_the_backend_touches_a_private_attribute() -> None:
    found = {}
    for path in sorted(PACKAGE.glob("*.py")):
        if path.name == "_private.py":
            continue
        code = "\n".join(
            line.split("#", 1)[0]
            for line in path.read_text().splitlines()
            if not line.lstrip().startswith(("from ", "import "))
        )
        used = {a or b for a, b in PRIVATE_USE.findall(code)}
        if used:
            found[path.name] = sorted(used)
    assert found == {}, found


@pytest.mark.parametrize("use", _private.PRIVATE_API, ids=lambda u: f"{u.owner}.{u.name}")
def test_a_keras_without_one_of_them_is_refused_naming_its_version(
    use: _private.PrivateUse, monkeypatch: pytest.MonkeyPatch
) -> None:
    owner = {
        "Model": keras.Model,
        "Optimizer": keras.optimizers.Optimizer,
        "Layer": keras.layers.Layer,
        "Variable": keras.Variable,
    }[use.owner]
    if use.set_by is None:  # a method: take it away from the class that defines it
        definer = next(k for k in owner.__mro__ if use.name in vars(k))
        monkeypatch.delattr(definer, use.name)
    else:  # an instance attribute: a Keras whose method no longer sets it

        def set_by(self: object, *args: object, **kwargs: object) -> None:
            return None

        monkeypatch.setattr(owner, use.set_by, set_by)
    with pytest.raises(BackendNotInstalledError) as err:
        _private.check_private_api(keras)
    message = str(err.value)
    assert f"Keras {keras.__version__}" in message
    assert f"{use.owner}.{use.name}" in message
