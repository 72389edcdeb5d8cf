"""The ``numpyro-svi`` backend (planned; not yet available).

This distribution, ``pipekit-train-numpyro``, is a placeholder: it holds no code and registers no
entry point, so ``TrainingLoop(backend="numpyro-svi")`` cannot run yet.
"""

__all__: list[str] = []
