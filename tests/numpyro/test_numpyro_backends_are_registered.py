"""pipekit-train-numpyro registers ``numpyro-svi`` and ``numpyro-mcmc`` through entry points."""

from importlib import metadata

from pipekit_train import registry


def test_entry_points_name_the_adapter_modules() -> None:
    eps = {
        ep.name: ep.value
        for ep in metadata.distribution("pipekit-train-numpyro").entry_points
        if ep.group == "pipekit_train.backends"
    }
    assert eps == {
        "numpyro-svi": "pipekit_train.adapters.numpyro_svi",
        "numpyro-mcmc": "pipekit_train.adapters.numpyro_mcmc",
    }


def test_registry_lists_and_loads_both() -> None:
    names = {b.name: b.distribution for b in registry.installed_backends()}
    assert names["numpyro-svi"] == names["numpyro-mcmc"] == "pipekit-train-numpyro"
    for name in ("numpyro-svi", "numpyro-mcmc"):
        assert callable(registry.load_backend(name).run)
