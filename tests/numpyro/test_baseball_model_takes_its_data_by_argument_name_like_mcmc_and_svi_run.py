"""NumPyro's ``baseball.py`` partially pooled model, ``partially_pooled(at_bats, hits=None)``,
takes ``dataset={"at_bats": ..., "hits": ...}``: the data reach it by its own argument names.

numpyro-mcmc's draws are bit-identical to ``MCMC.run(key, at_bats, hits=hits)`` and
numpyro-svi's guide parameters to ``SVI.run(key, steps, at_bats, hits=hits)`` (with
``init: "eager"``, NumPyro's own start; at the default compiled start, to ``SVI.run`` from
that start, and within float rounding of NumPyro's); the observed
site is the model's own (``obs``, found by its ``obs=``), and the op predicts from the
model's inputs by name. A name the model does not take is a ``ConfigError`` naming it.
"""

from __future__ import annotations

import jax
import numpy as np
import optax
import pytest
from _npy_helpers import mcmc_run_starts
from numpyro.infer import MCMC, NUTS, SVI, Trace_ELBO
from numpyro.infer.autoguide import AutoNormal
from numpyro.optim import optax_to_numpyro
from upstream_numpyro_examples import baseball_data, partially_pooled

from pipekit_train import TrainingLoop
from pipekit_train.adapters.bayes import NumpyroTask
from pipekit_train.adapters.numpyro_svi._compiled_init import compiled_init
from pipekit_train.errors import ConfigError

AT_BATS, HITS = baseball_data()
W, S = 30, 30


def test_mcmc_draws_equal_mcmc_run_with_the_models_own_argument_names() -> None:
    loop = TrainingLoop(
        task=NumpyroTask(model=partially_pooled, num_warmup=W, num_samples=S),
        dataset={"at_bats": AT_BATS, "hits": HITS},
        backend="numpyro-mcmc",
        seed=3,
        backend_options={"x64": False},  # MCMC.run below runs in the process default
    )
    with pytest.warns(UserWarning):  # so few draws: the ESS warning
        op, info = loop.run()
    ref = MCMC(NUTS(partially_pooled), num_warmup=W, num_samples=S, progress_bar=False)
    ref.run(jax.random.PRNGKey(3), AT_BATS, hits=HITS, init_params=mcmc_run_starts(info))
    want = ref.get_samples(group_by_chain=True)
    assert set(want) == set(op.samples_by_chain) == {"m", "kappa", "phi"}
    for site, value in want.items():
        assert op.samples_by_chain[site].tobytes() == np.asarray(value).tobytes(), site
    assert op.predictive_site == "obs"  # the model's own observed site
    assert op(at_bats=AT_BATS, draws=True).shape == (S, len(AT_BATS))


def _svi_params(tx: optax.GradientTransformation, **options: object) -> dict[str, np.ndarray]:
    op, info = TrainingLoop(
        # NumPyro's own guide, named: SVI.run's bits hold given the same guide (the
        # default, task.guide=None, is the standardised full-rank guide of issue 33).
        task=NumpyroTask(model=partially_pooled, guide="AutoNormal", predictive_samples=10),
        dataset={"at_bats": AT_BATS, "hits": HITS},
        backend="numpyro-svi",
        seed=3,
        max_steps=40,
        optimizer_config=tx,
        backend_options={"x64": False, **options},
    ).run()
    assert op.predictive_site == "obs" and op(at_bats=AT_BATS).shape == (len(AT_BATS),)
    return dict(info["params"])


def _same_bits(want: dict[str, object], got: dict[str, np.ndarray]) -> None:
    assert set(want) == set(got)
    for name, value in want.items():
        assert np.asarray(value).tobytes() == np.asarray(got[name]).tobytes(), name


def test_svi_params_equal_svi_run_with_the_models_own_argument_names() -> None:
    tx = optax.adam(0.05)
    init_key = jax.random.split(jax.random.PRNGKey(3), 3)[0]  # the backend's init key

    def svi() -> SVI:
        return SVI(
            partially_pooled, AutoNormal(partially_pooled), optax_to_numpyro(tx), Trace_ELBO()
        )

    eager = svi().run(init_key, 40, AT_BATS, hits=HITS, progress_bar=False).params
    _same_bits(eager, _svi_params(tx, init="eager"))  # NumPyro's own start: SVI.run's bits

    ref = svi()  # the default start, compiled: SVI.run from it is the backend's run
    start = compiled_init(ref, init_key, (), {"at_bats": AT_BATS, "hits": HITS})
    want = ref.run(init_key, 40, AT_BATS, hits=HITS, progress_bar=False, init_state=start).params
    got = _svi_params(tx)
    _same_bits(want, got)
    for name, value in eager.items():  # and within rounding of NumPyro's own start's run
        np.testing.assert_allclose(got[name], value, rtol=1e-4, atol=1e-5, err_msg=name)


def test_a_name_the_model_does_not_take_is_named_with_the_fix() -> None:
    loop = TrainingLoop(
        task=NumpyroTask(model=partially_pooled, num_warmup=5, num_samples=5),
        dataset={"at_bat": AT_BATS, "hits": HITS},
        backend="numpyro-mcmc",
    )
    with pytest.raises(ConfigError, match=r"requires \['at_bats'\].*'at_bats': \.\.\.") as err:
        loop.run()
    assert err.value.field == "dataset"
