"""The ``lightning`` backend (planned; not yet available).

This distribution, ``pipekit-train-lightning``, is a placeholder: it holds no code and registers no
entry point, so ``TrainingLoop(backend="lightning")`` cannot run yet.
"""

__all__: list[str] = []
