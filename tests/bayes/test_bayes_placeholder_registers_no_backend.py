"""pipekit-train-bayes is a placeholder until its backend lands.

The checks live in tests/placeholder_checks.py.
"""

from placeholder_checks import define_placeholder_tests

globals().update(
    define_placeholder_tests(
        dist="pipekit-train-bayes",
        modules=["pipekit_train.adapters.bayes"],
        backend_names=[],
    )
)
