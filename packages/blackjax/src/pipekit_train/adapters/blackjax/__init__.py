"""The ``blackjax`` backend (planned; not yet available).

This distribution, ``pipekit-train-blackjax``, is a placeholder: it holds no code and registers no
entry point, so ``TrainingLoop(backend="blackjax")`` cannot run yet.
"""

__all__: list[str] = []
