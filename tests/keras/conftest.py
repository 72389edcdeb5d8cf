"""The keras suite: Keras on JAX, selected before anything imports Keras."""

import os

os.environ.setdefault("KERAS_BACKEND", "jax")
