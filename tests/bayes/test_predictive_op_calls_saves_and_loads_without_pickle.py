"""``NumpyroPredictiveOp``: mean and draws of the predictive site; save/load with no pickle."""

import functools
import json
import zipfile

import numpy as np
import pytest
from _bayes_models import linreg, linreg_data

from pipekit_train.adapters.bayes import NumpyroPredictiveOp
from pipekit_train.errors import ConfigError
from pipekit_train.operator import Operator


def _op(model=linreg) -> NumpyroPredictiveOp:
    rng = np.random.default_rng(0)
    C, D = 2, 50
    w = np.array([1.5, -0.5]) + 0.01 * rng.normal(size=(C, D, 2))
    samples = {
        "w": w.astype(np.float32),
        "b": (0.3 + 0.01 * rng.normal(size=(C, D))).astype(np.float32),
        "sigma": np.full((C, D), 0.2, np.float32),
        "mean_w": w.mean(-1).astype(np.float32),
    }
    diverging = np.zeros((C, D), bool)
    diverging[1, 3] = True
    return NumpyroPredictiveOp(
        model, samples, predictive_samples=40, sample_stats={"diverging": diverging}
    )


def test_call_returns_the_predictive_mean_and_draws() -> None:
    op = _op()
    assert isinstance(op, Operator)
    x, _ = linreg_data(n=7)
    mean = np.asarray(op(x))
    draws = np.asarray(op(x, draws=True))
    assert mean.shape == (7,) and draws.shape == (40, 7)
    np.testing.assert_allclose(mean, draws.mean(0), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(mean, x @ np.array([1.5, -0.5]) + 0.3, atol=0.15)
    np.testing.assert_array_equal(np.asarray(op(x)), mean)  # deterministic given the seed


def test_samples_are_flat_and_by_chain_with_deterministic_sites() -> None:
    op = _op()
    assert op.samples["w"].shape == (100, 2)
    assert op.samples_by_chain["w"].shape == (2, 50, 2)
    assert "mean_w" in op.samples
    diag = op.diagnostics()
    assert diag["divergences"] == 1 and diag["num_chains"] == 2
    assert set(diag["sites"]["w"]) >= {"r_hat", "ess_bulk", "ess_tail", "mcse_mean"}
    idata = op.to_inference_data()
    assert dict(idata.posterior.sizes)["chain"] == 2
    assert int(idata.sample_stats["diverging"].sum()) == 1
    table = op.summary()
    assert {"r_hat", "ess_bulk", "ess_tail"} <= set(table.columns)


def test_save_load_roundtrip_writes_no_pickle(tmp_path) -> None:
    op = _op(functools.partial(linreg, N=60))
    op.save(tmp_path / "op")
    meta = json.loads((tmp_path / "op" / "op.json").read_text())
    assert meta["model"] == "_bayes_models:linreg" and meta["model_kwargs"] == {"N": 60}
    for name in ("samples.npz", "sample_stats.npz"):
        with zipfile.ZipFile(tmp_path / "op" / name) as z:
            for member in z.namelist():
                assert z.read(member)[:6] == b"\x93NUMPY"  # .npy records, not pickles
        np.load(tmp_path / "op" / name, allow_pickle=False)
    back = NumpyroPredictiveOp.load(tmp_path / "op", trusted=True)
    assert isinstance(back.model, functools.partial) and back.model.keywords == {"N": 60}
    for k, v in op.samples_by_chain.items():
        np.testing.assert_array_equal(back.samples_by_chain[k], v)
    x, _ = linreg_data(n=5)
    np.testing.assert_array_equal(np.asarray(back(x)), np.asarray(op(x)))


def test_a_lambda_model_cannot_be_saved_by_name(tmp_path) -> None:
    op = _op(lambda x, y=None: linreg(x, y))
    with pytest.raises(ConfigError, match="model_ref"):
        op.save(tmp_path / "op")
    op.model_ref = "_bayes_models:linreg"
    op.save(tmp_path / "op")
    assert NumpyroPredictiveOp.load(tmp_path / "op", trusted=True).model is linreg
