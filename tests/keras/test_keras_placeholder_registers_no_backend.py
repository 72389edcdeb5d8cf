"""pipekit-train-keras is a placeholder until its backend lands.

The checks live in tests/placeholder_checks.py.
"""

from placeholder_checks import define_placeholder_tests

globals().update(
    define_placeholder_tests(
        dist="pipekit-train-keras",
        modules=["pipekit_train.adapters.keras"],
        backend_names=["keras"],
    )
)
