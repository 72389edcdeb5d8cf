"""The Keras functional-API guide's "Models with multiple inputs and outputs" (the ticket
ranker: title and body texts plus tags in; a priority and a department out; a loss per
output, ``loss_weights={"priority": 1.0, "department": 0.2}``), with the guide's own
random data shrunk (fewer words, shorter texts, smaller LSTMs). The loop trains it as
compiled, on dict inputs and dict targets, and its first steps equal Keras'
``train_on_batch`` on the same batches from the same weights.
(Source: https://keras.io/guides/functional_api/#models-with-multiple-inputs-and-outputs)"""

from __future__ import annotations

import keras
import numpy as np
from keras import layers

from pipekit_train import TrainingLoop
from pipekit_train.engine import BatchSource

NUM_TAGS = 12  # Number of unique issue tags
NUM_WORDS = 1000  # Size of vocabulary obtained when preprocessing text data
NUM_DEPARTMENTS = 4  # Number of departments for predictions
ROWS, BATCH, STEPS = 128, 32, 3


def _ticket_ranker() -> keras.Model:
    keras.utils.set_random_seed(0)
    title_input = keras.Input(shape=(None,), name="title")  # Variable-length sequence of ints
    body_input = keras.Input(shape=(None,), name="body")  # Variable-length sequence of ints
    tags_input = keras.Input(shape=(NUM_TAGS,), name="tags")  # Binary vectors of size `num_tags`
    # Embed each word in the title into a 16-dimensional vector
    title_features = layers.Embedding(NUM_WORDS, 16)(title_input)
    # Embed each word in the text into a 16-dimensional vector
    body_features = layers.Embedding(NUM_WORDS, 16)(body_input)
    # Reduce sequence of embedded words in the title into a single 16-dimensional vector
    title_features = layers.LSTM(16)(title_features)
    # Reduce sequence of embedded words in the body into a single 8-dimensional vector
    body_features = layers.LSTM(8)(body_features)
    # Merge all available features into a single large vector via concatenation
    x = layers.concatenate([title_features, body_features, tags_input])
    # Stick a logistic regression for priority prediction on top of the features
    priority_pred = layers.Dense(1, name="priority")(x)
    # Stick a department classifier on top of the features
    department_pred = layers.Dense(NUM_DEPARTMENTS, name="department")(x)
    model = keras.Model(
        inputs=[title_input, body_input, tags_input],
        outputs={"priority": priority_pred, "department": department_pred},
    )
    model.compile(
        optimizer=keras.optimizers.RMSprop(1e-3),
        loss={
            "priority": keras.losses.BinaryCrossentropy(from_logits=True),
            "department": keras.losses.CategoricalCrossentropy(from_logits=True),
        },
        loss_weights={"priority": 1.0, "department": 0.2},
    )
    return model


def _data() -> dict[str, dict[str, np.ndarray]]:
    rng = np.random.default_rng(0)
    return {
        "x": {
            "title": rng.integers(NUM_WORDS, size=(ROWS, 10)),
            "body": rng.integers(NUM_WORDS, size=(ROWS, 20)),
            "tags": rng.integers(2, size=(ROWS, NUM_TAGS)).astype("float32"),
        },
        "y": {
            "priority": rng.random(size=(ROWS, 1)).astype("float32"),
            "department": rng.integers(2, size=(ROWS, NUM_DEPARTMENTS)).astype("float32"),
        },
    }


def test_functional_api_multi_input_multi_output_model_trains_like_train_on_batch() -> None:
    data = _data()
    model = _ticket_ranker()
    _, info = TrainingLoop(
        model_op=model, dataset=data, batch_size=BATCH, max_steps=STEPS, seed=0, backend="keras"
    ).run()
    assert info["final_step"] == STEPS

    plain = _ticket_ranker()
    rows = BatchSource({"x": np.arange(ROWS)}, BATCH, 0)  # the loop's row order (seed 0)
    for step in range(STEPS):
        take = rows[step]["x"]
        x = {name: column[take] for name, column in data["x"].items()}
        y = {name: column[take] for name, column in data["y"].items()}
        plain.train_on_batch(x, y)
    assert len(plain.trainable_variables) == len(model.trainable_variables)
    for ours, theirs in zip(model.trainable_variables, plain.trainable_variables, strict=True):
        np.testing.assert_allclose(np.asarray(ours.value), np.asarray(theirs.value), atol=1e-5)
