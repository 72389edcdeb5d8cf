"""A subclassed Keras model registered for safe-mode loading (imported before load)."""

from __future__ import annotations

import keras


@keras.saving.register_keras_serializable(package="pipekit_tests")
class TwoLayer(keras.Model):
    def __init__(self, hidden: int = 16, **kwargs) -> None:
        super().__init__(**kwargs)
        self.hidden = hidden
        self.dense = keras.layers.Dense(hidden, activation="relu")
        self.out = keras.layers.Dense(10)

    def call(self, x):
        return self.out(self.dense(x))

    def get_config(self) -> dict:
        return {**super().get_config(), "hidden": self.hidden}
