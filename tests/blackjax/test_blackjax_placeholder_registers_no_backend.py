"""pipekit-train-blackjax is a placeholder until its backend lands.

The checks live in tests/placeholder_checks.py.
"""

from placeholder_checks import define_placeholder_tests

globals().update(
    define_placeholder_tests(
        dist="pipekit-train-blackjax",
        modules=["pipekit_train.adapters.blackjax"],
        backend_names=["blackjax"],
    )
)
