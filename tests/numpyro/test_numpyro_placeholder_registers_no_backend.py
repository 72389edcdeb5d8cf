"""pipekit-train-numpyro is a placeholder until its backend lands.

The checks live in tests/placeholder_checks.py.
"""

from placeholder_checks import define_placeholder_tests

globals().update(
    define_placeholder_tests(
        dist="pipekit-train-numpyro",
        modules=["pipekit_train.adapters.numpyro_svi", "pipekit_train.adapters.numpyro_mcmc"],
        backend_names=["numpyro-svi", "numpyro-mcmc"],
    )
)
