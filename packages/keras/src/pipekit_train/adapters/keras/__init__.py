"""The ``keras`` backend (planned; not yet available).

This distribution, ``pipekit-train-keras``, is a placeholder: it holds no code and registers no
entry point, so ``TrainingLoop(backend="keras")`` cannot run yet.
"""

__all__: list[str] = []
