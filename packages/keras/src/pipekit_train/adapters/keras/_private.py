"""Every private Keras API the keras backend relies on, in one place, checked at import.

Keras 3 offers no public route for these (checked against Keras 3.15; each entry of
:data:`PRIVATE_API` says why), so the rest of the backend reaches them only through the
accessors below. Importing this module (the package imports it) checks that each still
exists in the installed Keras — by the class attribute, or by the name in the code of
the Keras method that sets the instance attribute, so nothing is built or compiled —
and raises ``BackendNotInstalledError`` naming the Keras version and what it lacks,
instead of an ``AttributeError`` in the middle of ``fit``.

Public routes used instead of private ones: ``optimizer.iterations`` is not one (with
``gradient_accumulation_steps`` it counts updates, and the EMA rule needs micro-batches),
``model.get_compile_config()`` is not one (it serialises the optimiser, and a user's
compile keeps its optimiser *instance*).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pipekit_train.errors import BackendNotInstalledError
from pipekit_train.registry import supported

from ._env import import_keras

__all__ = [
    "PRIVATE_API",
    "check_private_api",
    "compile_config",
    "compiled_metrics",
    "ema_averages",
    "flatten_layers",
    "learning_rate_schedule",
    "micro_batch_count",
    "optimizer_variables_order",
    "replace_ema_update",
    "set_loss_tracker",
    "symbolic_build",
    "variable_layout",
    "set_variable_layout",
]


@dataclass(frozen=True)
class PrivateUse:
    """One private Keras attribute: where it lives and why no public route serves."""

    owner: str  # the public class: "Model", "Optimizer", "Layer", "Variable"
    name: str
    set_by: str | None  # the method whose code sets it (an instance attribute), or None
    why: str


PRIVATE_API: tuple[PrivateUse, ...] = (
    PrivateUse(
        "Model",
        "_loss_tracker",
        "compile",
        "the per-step loss (fit logs its running mean); Keras reads the tracker by this name",
    ),
    PrivateUse(
        "Model",
        "_compile_config",
        "compile",
        "a user's compile() arguments as objects (get_compile_config() serialises them)",
    ),
    PrivateUse(
        "Model",
        "_compile_metrics",
        "compile",
        "the compiled metrics as one object, for val_<name> and their checkpointed state "
        "(model.metrics mixes them with the loss trackers)",
    ),
    PrivateUse(
        "Model",
        "_symbolic_build",
        None,
        "builds the compiled metrics before fit (shapes only), so their variables exist "
        "when a checkpoint is restored",
    ),
    PrivateUse(
        "Layer",
        "_flatten_layers",
        None,
        "every nested layer (Model.layers is one level) for mixed-bfloat16 policies",
    ),
    PrivateUse(
        "Optimizer",
        "_iterations",
        "__init__",
        "the micro-batch count (iterations divides it by gradient_accumulation_steps)",
    ),
    PrivateUse(
        "Optimizer",
        "_learning_rate",
        "__init__",
        "a user optimiser's schedule object (learning_rate gives its current value only)",
    ),
    PrivateUse(
        "Optimizer",
        "_trainable_variables",
        "build",
        "the variables the EMA averages, in the order of its averages",
    ),
    PrivateUse(
        "Optimizer",
        "_model_variables_moving_average",
        "build",
        "the EMA weights (no public accessor; finalize_variable_values only copies them)",
    ),
    PrivateUse(
        "Optimizer",
        "_update_model_variables_moving_average",
        None,
        "the EMA rule applied after each micro-batch, replaced to update per optimiser step",
    ),
    PrivateUse(
        "Variable",
        "_layout",
        "__init__",
        "the layout of a variable made outside a distribution scope (no public setter)",
    ),
)


def _owners(keras: Any) -> dict[str, type]:
    return {
        "Model": keras.Model,
        "Optimizer": keras.optimizers.Optimizer,
        "Layer": keras.layers.Layer,
        "Variable": keras.Variable,
    }


def _names_set_by(cls: type, method: str) -> tuple[str, ...]:
    """The attribute names the code of ``cls.method`` (first class in the MRO) uses."""
    for klass in cls.__mro__:
        if method in vars(klass):
            fn = inspect.unwrap(vars(klass)[method])
            code = getattr(fn, "__code__", None)
            return tuple(code.co_names) if code is not None else ()
    return ()


def missing_private_api(keras: Any) -> list[str]:
    """``Class.attr`` for each entry of :data:`PRIVATE_API` the installed Keras lacks."""
    owners = _owners(keras)
    missing = []
    for use in PRIVATE_API:
        cls = owners[use.owner]
        present = (
            hasattr(cls, use.name)
            if use.set_by is None
            else use.name in _names_set_by(cls, use.set_by)
        )
        if not present:
            missing.append(f"{use.owner}.{use.name}")
    return missing


def check_private_api(keras: Any) -> None:
    """Raise ``BackendNotInstalledError`` naming the Keras version if anything is missing."""
    missing = missing_private_api(keras)
    if missing:
        version = getattr(keras, "__version__", "?")
        wanted = supported("pipekit-train-keras", "keras")
        raise BackendNotInstalledError(
            f"pipekit-train-keras relies on Keras internals that Keras {version} does not "
            f"have: {', '.join(missing)} (see pipekit_train.adapters.keras._private). This "
            f"pipekit-train-keras supports {wanted}, the Keras versions its test matrix runs "
            f"(docs/compatibility.md): pip install '{wanted}'"
        )


check_private_api(import_keras())


# ---------------------------------------------------------------------------- accessors


def set_loss_tracker(model: Any, metric: Any) -> Any:
    """Replace the model's loss tracker (after ``compile``; a no-op before one); return
    the one it replaced (None if none)."""
    previous = getattr(model, "_loss_tracker", None)
    if hasattr(model, "_loss_tracker"):
        # Not through Layer.__setattr__: a built subclassed model refuses new tracked
        # state, and Keras reads the tracker by this attribute, not by tracking.
        object.__setattr__(model, "_loss_tracker", metric)
    return previous


def compile_config(model: Any) -> Any:
    """The model's last ``compile()`` record (its ``.config`` holds the objects), or None."""
    return getattr(model, "_compile_config", None)


def compiled_metrics(model: Any) -> Any:
    """The model's compiled metrics (one Keras ``Metric`` over all of them), or None."""
    return getattr(model, "_compile_metrics", None)


def symbolic_build(model: Any, x: Any, y: Any) -> None:
    """Build what ``fit`` builds first (layers, compiled metrics and loss), on shapes only."""
    model._symbolic_build(data_batch=(x, y))


def flatten_layers(model: Any) -> list[Any]:
    """Every layer of ``model``, nested ones included, the model itself first."""
    return list(model._flatten_layers(include_self=True, recursive=True))


def micro_batch_count(optimizer: Any) -> Any:
    """The optimiser's step counter over micro-batches (a Keras variable)."""
    return optimizer._iterations


def learning_rate_schedule(optimizer: Any) -> Any:
    """What the optimiser was given as its learning rate: a schedule, or a variable."""
    return getattr(optimizer, "_learning_rate", None)


def optimizer_variables_order(optimizer: Any) -> list[Any]:
    """The trainable variables the optimiser was built on, in its slots' order."""
    return list(optimizer._trainable_variables)


def ema_averages(optimizer: Any) -> list[Any]:
    """The EMA weights of a ``use_ema`` optimiser (``None`` for a variable it skips)."""
    return list(optimizer._model_variables_moving_average)


def replace_ema_update(optimizer: Any, update: Callable[[list[Any]], None]) -> None:
    """Make ``update(trainable_variables)`` the EMA rule Keras calls after each micro-batch."""
    object.__setattr__(optimizer, "_update_model_variables_moving_average", update)


def variable_layout(variable: Any) -> Any:
    """The variable's distribution layout (``None`` when it was made outside a scope)."""
    return getattr(variable, "_layout", None)


def set_variable_layout(variable: Any, layout: Any) -> None:
    """Give ``variable`` the distribution ``layout`` (applied by the next ``assign``)."""
    variable._layout = layout
