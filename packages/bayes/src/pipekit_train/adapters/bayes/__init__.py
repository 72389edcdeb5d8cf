"""Shared layer of the Bayesian backends (planned; not yet available).

This distribution, ``pipekit-train-bayes``, is a placeholder: it holds no code and
registers no backend. The NumPyro model bridge, ``NumpyroTask``, the predictive
Operator and the diagnostics will live here.
"""

__all__: list[str] = []
