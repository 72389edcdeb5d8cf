"""``KerasModelOp.load`` runs no code named in a ``.keras`` archive (safe mode, no custom objects).

The archive's ``config.json`` is edited so a layer names a module whose import creates a
marker file (and, separately, ``os`` / ``system``); loading refuses and the module is never
imported: Keras 3 imports only ``keras*`` modules from a config, and pipekit passes no
``custom_objects`` and keeps ``safe_mode=True``.
"""

from __future__ import annotations

import json
import sys
import zipfile
from pathlib import Path

import keras
import pytest
from recorded_code import marker_module

from pipekit_train.adapters.keras import KerasModelOp
from pipekit_train.errors import PipekitError


def _edited_archive(tmp_path: Path, module: str, class_name: str) -> Path:
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    good = KerasModelOp(model).save(tmp_path / "good")
    bad = tmp_path / "bad.keras"
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(bad, "w") as dst:
        for item in src.infolist():
            data = src.read(item.filename)
            if item.filename == "config.json":
                config = json.loads(data)
                layer = config["config"]["layers"][-1]
                layer.update(module=module, class_name=class_name, registered_name=None)
                data = json.dumps(config).encode()
            dst.writestr(item, data)
    return bad


@pytest.mark.parametrize(
    ("module", "class_name"), [("pipekit_evil_keras_layer", "make"), ("os", "system")]
)
def test_an_edited_layer_module_is_not_imported(tmp_path, monkeypatch, module, class_name):
    marker = marker_module(tmp_path, monkeypatch, "pipekit_evil_keras_layer")
    bad = _edited_archive(tmp_path, module, class_name)
    with pytest.raises(PipekitError, match="cannot be loaded safely"):
        KerasModelOp.load(bad)
    assert not marker.exists() and "pipekit_evil_keras_layer" not in sys.modules
