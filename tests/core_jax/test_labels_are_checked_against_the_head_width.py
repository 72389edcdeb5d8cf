"""``check_labels``: labels in range, a head wide enough, soft labels only where declared."""

from __future__ import annotations

import numpy as np
import pytest

from pipekit_train.engine import check_labels, output_width
from pipekit_train.errors import ConfigError, DataError

F = "TrainingLoop.dataset"


def test_labels_in_range_and_soft_labels_pass() -> None:
    check_labels(np.arange(10) % 3, 3, "cross_entropy", field=F)
    check_labels(np.eye(3, dtype=np.float32)[np.arange(6) % 3], 3, "cross_entropy", field=F)
    check_labels(np.array([0.0, 1.0, 2.0]), 3, "cross_entropy", field=F)  # integral floats
    check_labels(np.array([0.2, 0.9]), 1, "binary_cross_entropy", field=F)  # probabilities
    check_labels(np.array([7.5, -3.0]), 1, "mse", field=F)  # regression: nothing declared
    check_labels(np.array([9]), 2, lambda p, t: 0.0, field=F)  # a callable declares nothing


def test_label_out_of_range_names_field_row_and_bound() -> None:
    with pytest.raises(DataError, match=r"TrainingLoop.dataset\['y'\].*row 2.*\[0, 2\]"):
        check_labels(np.array([0, 1, 3, 1]), 3, "cross_entropy", field=F)
    with pytest.raises(DataError, match="row 1"):
        check_labels(np.array([0, -1]), None, "cross_entropy", field=F)


def test_one_wide_head_under_cross_entropy_is_config_error_on_model_op() -> None:
    with pytest.raises(ConfigError, match="binary_cross_entropy") as err:
        check_labels(np.zeros(4, np.int32), output_width((16, 1)), "cross_entropy", field=F)
    assert err.value.field == "model_op"
    assert output_width((16,)) == 1 and output_width((16, 5, 7)) == 7


def test_fractional_labels_only_where_declared() -> None:
    with pytest.raises(DataError, match=r"fractional.*row 1"):
        check_labels(np.array([1.0, 0.5, 2.0]), 3, "cross_entropy", field=F)
    with pytest.raises(DataError, match=r"soft labels in \[-0.5"):
        check_labels(np.array([[1.5, -0.5], [0.0, 1.0]]), 2, "cross_entropy", field=F)
    with pytest.raises(DataError, match=r"\[0, 1\]"):
        check_labels(np.array([0.0, 2.0]), 1, "binary_cross_entropy", field=F)
