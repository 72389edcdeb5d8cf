"""What an operator may record to rebuild its structure (``pipekit_train.operator
.check_factory_record``, used by Equinox's, Lightning's and the Flax example's operators): an
import string and a JSON dict of keyword arguments with string keys. Each mistake is a
``ConfigError`` naming the operator's own field; keyword arguments without a factory too."""

from __future__ import annotations

import math

import pytest

from pipekit_train.errors import ConfigError
from pipekit_train.operator import check_factory_record


def test_a_good_record_comes_back_as_a_plain_dict() -> None:
    assert check_factory_record("MyOp", "pkg.models:make", {"width": 4}) == {"width": 4}
    assert check_factory_record("MyOp", "pkg.models:make", None) == {}
    assert check_factory_record("MyOp", None, None) is None
    assert check_factory_record("MyOp", None, {}) is None


@pytest.mark.parametrize(
    ("factory", "kwargs", "field", "words"),
    [
        (None, {"width": 4}, "MyOp.factory", "factory_kwargs given without factory"),
        ("not an import string", None, "MyOp.factory", "must be an import string"),
        (len, None, "MyOp.factory", "must be an import string"),
        ("pkg:make", [("width", 4)], "MyOp.factory_kwargs", "a dict with string keys"),
        ("pkg:make", {1: 4}, "MyOp.factory_kwargs", "a dict with string keys"),
        ("pkg:make", {"f": object()}, "MyOp.factory_kwargs", "JSON-serialisable"),
        ("pkg:make", {"x": math.nan}, "MyOp.factory_kwargs", "written to op.json"),
    ],
)
def test_each_mistake_names_the_operators_field(factory, kwargs, field, words) -> None:
    with pytest.raises(ConfigError, match=words) as info:
        check_factory_record("MyOp", factory, kwargs)
    assert info.value.field == field and field.split(".")[0] in str(info.value)
