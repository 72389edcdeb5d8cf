"""Every bad ``NumpyroTask`` field is a ``ConfigError`` naming it, at construction."""

import pytest
from _bayes_models import linreg, linreg_data, no_y

from pipekit_train.adapters.bayes import NumpyroTask, check_task_on_data, require_task
from pipekit_train.errors import ConfigError


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"num_chains": 0}, "task.num_chains"),
        ({"num_samples": 0}, "task.num_samples"),
        ({"num_warmup": -1}, "task.num_warmup"),
        ({"predictive_samples": 0}, "task.predictive_samples"),
        ({"guide": "AutoNormalz"}, "task.guide"),
        ({"guide": 3}, "task.guide"),
        ({"loss": "elbo"}, "task.loss"),
        ({"predictive_site": ""}, "task.predictive_site"),
    ],
)
def test_bad_field(kwargs: dict, field: str) -> None:
    with pytest.raises(ConfigError) as err:
        NumpyroTask(model=linreg, **kwargs)
    assert err.value.field == field
    assert field.split(".")[1] in str(err.value)


def test_unknown_guide_suggests_the_closest_name() -> None:
    with pytest.raises(ConfigError, match="did you mean 'AutoNormal'"):
        NumpyroTask(model=linreg, guide="AutoNormall")


def test_model_without_y_given_x_and_y_is_told_to_take_its_data_by_name() -> None:
    # Any signature is a model; the (x, y) form that does not bind to it is the mistake.
    task = NumpyroTask(model=no_y)
    x, y = linreg_data(8)
    with pytest.raises(ConfigError, match=r"task.model\(x, y\).*\{'x': \.\.\.\}") as err:
        check_task_on_data(task, x, y)
    assert err.value.field == "dataset"


def test_model_that_is_not_callable_is_rejected() -> None:
    with pytest.raises(ConfigError) as err:
        NumpyroTask(model=42)
    assert err.value.field == "task.model"


def test_model_by_import_string() -> None:
    assert NumpyroTask(model="_bayes_models:linreg").model is linreg
    with pytest.raises(ConfigError, match="cannot import") as err:
        NumpyroTask(model="_bayes_models:nope")
    assert err.value.field == "task.model"


def test_every_guide_name_is_accepted() -> None:
    from pipekit_train.adapters.bayes import GUIDE_NAMES, make_guide

    for name in GUIDE_NAMES:
        guide = make_guide(name, linreg)
        assert type(guide).__name__ == name


def test_predictive_site_must_be_an_observed_site() -> None:
    x, y = linreg_data()
    assert "obs" in check_task_on_data(NumpyroTask(model=linreg), x, y)
    with pytest.raises(ConfigError, match="'y_obs' is not a sample site") as err:
        check_task_on_data(NumpyroTask(model=linreg, predictive_site="y_obs"), x, y)
    assert err.value.field == "task.predictive_site"
    with pytest.raises(ConfigError, match="latent site") as err:
        check_task_on_data(NumpyroTask(model=linreg, predictive_site="b"), x, y)
    assert err.value.field == "task.predictive_site"


def test_model_failing_on_the_data_names_task_model() -> None:
    x, y = linreg_data()
    with pytest.raises(ConfigError, match="failed when run") as err:
        check_task_on_data(NumpyroTask(model=linreg), x[:, 0], y)
    assert err.value.field == "task.model"


class _Loop:
    def __init__(self, task=None, loss=None):
        self.task, self.loss = task, loss


def test_loss_instead_of_a_task_is_rejected() -> None:
    with pytest.raises(ConfigError, match="loss='mse' was given") as err:
        require_task(_Loop(loss="mse"), "numpyro-mcmc")
    assert err.value.field == "task"
    with pytest.raises(ConfigError, match="NumpyroTask") as err:
        require_task(_Loop(task=object()), "numpyro-svi")
    assert err.value.field == "task"


def test_a_guide_only_a_backend_builds_is_named_by_make_guide_not_an_attribute_error() -> None:
    from pipekit_train.adapters.bayes import BACKEND_GUIDE_NAMES, make_guide

    for name in BACKEND_GUIDE_NAMES:
        with pytest.raises(ConfigError, match="numpyro-svi backend itself") as err:
            make_guide(name, linreg)
        assert err.value.field == "task.guide"
