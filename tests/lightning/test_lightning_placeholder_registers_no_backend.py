"""pipekit-train-lightning is a placeholder until its backend lands.

The checks live in tests/placeholder_checks.py.
"""

from placeholder_checks import define_placeholder_tests

globals().update(
    define_placeholder_tests(
        dist="pipekit-train-lightning",
        modules=["pipekit_train.adapters.lightning"],
        backend_names=["lightning"],
    )
)
