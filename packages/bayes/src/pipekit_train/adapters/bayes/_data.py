"""The full dataset as host arrays, checked for what a posterior cannot absorb."""

from __future__ import annotations

from typing import Any

import numpy as np

from pipekit_train.engine import materialize
from pipekit_train.errors import DataError

__all__ = [
    "full_data",
    "model_data",
    "named_data",
    "is_named_form",
    "check_binds",
    "takes_no_data",
    "check_finite",
]


def check_finite(arrays: dict[str, np.ndarray], field: str) -> None:
    """``DataError`` naming the field, the key and the first row holding NaN or inf."""
    for key, a in arrays.items():
        if a.dtype.kind not in "fc":
            continue
        bad = ~np.isfinite(a)
        if bad.any():
            row = int(np.argwhere(bad.reshape(a.shape[0], -1).any(axis=1))[0, 0])
            raise DataError(
                f"{field}['{key}'] holds NaN or inf (first at row {row}, "
                f"{int(bad.sum())} values); a likelihood over it is undefined — drop or "
                "impute those rows"
            )


def _arrays(dataset: Any, field: str) -> dict[str, np.ndarray]:
    """Core's normalisation and checks (forms, dtype, lengths, finiteness), read in full."""
    from pipekit_train.engine import refuse_stream

    # A backend that materialises the data cannot read a stream; the minibatch paths
    # (numpyro-svi, blackjax sgld / sghmc) take theirs before coming here.
    refuse_stream(dataset, field, "this backend (it materialises the data)")
    return dict(materialize(dataset, field))


def full_data(dataset: Any, field: str) -> tuple[np.ndarray, np.ndarray | None]:
    """``(x, y)`` of the whole dataset (``y`` may be absent), materialised once."""
    arrays = _arrays(dataset, field)
    return arrays["x"], arrays.get("y")


def model_data(
    dataset: Any, field: str
) -> tuple[np.ndarray, np.ndarray | None, dict[str, np.ndarray]]:
    """``(x, y, extras)``: the whole dataset, with every named array beyond ``x`` and ``y``
    in ``extras`` — the model receives each as the keyword of its name."""
    arrays = _arrays(dataset, field)
    extras = {k: v for k, v in arrays.items() if k not in ("x", "y")}
    return arrays["x"], arrays.get("y"), extras


def _named_array(value: Any, field: str, name: str) -> np.ndarray:
    try:
        a = np.asarray(value)
    except Exception as exc:  # noqa: BLE001 - ragged lists and the like
        raise DataError(f"{field}['{name}'] is not an array ({type(exc).__name__}: {exc})") from exc
    if a.dtype.kind not in "biuf":
        raise DataError(
            f"{field}['{name}'] has dtype {a.dtype}; a NumPyro model's data must be numbers "
            "(bool, int or float arrays)"
        )
    check_finite({name: a.reshape(-1, 1) if a.ndim == 0 else a}, field)
    return a


def is_named_form(dataset: Any) -> bool:
    """Whether ``dataset`` gives a NumPyro model its data by the model's own argument names
    (``None``, or a dict of string keys that is not ``{'x': X, 'y': Y, ...}``) rather than in
    the ``(x, y)`` forms; decided on the container alone, reading no array.

    The one rule :func:`named_data` binds by, for a backend that must refuse the form
    before reading anything (the minibatch samplers, whose batches are rows of ``x``)."""
    from collections.abc import Mapping

    if dataset is None:
        return True
    if not isinstance(dataset, Mapping) or ("x" in dataset and "y" in dataset):
        return False
    return all(isinstance(k, str) for k in dataset)  # else core's forms name the bad key


def named_data(model: Any, dataset: Any, field: str) -> dict[str, np.ndarray] | None:
    """The dataset bound to the model by its own argument names, or ``None`` for the
    ``(x, y)`` forms (a tuple, a dict with an ``'x'`` key, records, a stream), which
    ``model_data`` reads (a dict with both ``'x'`` and ``'y'`` is ``model(x, y, ...)``).

    ``dataset=None`` is a model that takes no data (the funnel, a prior predictive check):
    ``{}``. Any other dict gives the model each entry as the keyword of its
    name (``{'at_bats': a, 'hits': h}`` → ``model(at_bats=a, hits=h)``; an entry that is
    ``None`` is left out, so the model's default applies). Its arrays need not share a
    length; each must hold numbers, all finite. ``ConfigError`` (field ``dataset``) when
    the names do not bind to the model's signature, naming the missing or unknown ones.
    """
    if not is_named_form(dataset):
        return None
    arrays = {k: _named_array(v, field, k) for k, v in (dataset or {}).items() if v is not None}
    check_binds(model, arrays, field)
    return arrays


def check_binds(model: Any, names: Any, field: str, positional: tuple[str, ...] = ()) -> None:
    """``ConfigError`` unless ``model(*positional, **{name: ...})`` binds to the model's
    signature (``positional``: the names of the ``(x, y)`` form's arguments, for messages)."""
    import functools
    import inspect

    from pipekit_train.errors import ConfigError

    target = model.func if isinstance(model, functools.partial) else model
    bound = model.keywords if isinstance(model, functools.partial) else {}
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):  # builtins, some C callables: nothing to check
        return
    try:
        sig.bind(*positional, **bound, **dict.fromkeys(names))
    except TypeError as exc:
        params = sig.parameters.values()
        required = [
            p.name
            for p in params
            if p.default is p.empty
            and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
            and p.name not in bound
        ]
        missing = [n for n in required if n not in names]
        takes_any = any(p.kind == p.VAR_KEYWORD for p in params)
        unknown = [] if takes_any else [n for n in names if n not in sig.parameters]
        name = getattr(target, "__name__", "model")
        if positional:
            call = ", ".join([*positional, *(f"{n}=..." for n in names)])
            raise ConfigError(
                f"{field} in the (x, y) form calls task.model({call}), which {name}{sig} "
                f"does not take ({exc}); "
                + (
                    "give the data by the model's own argument names instead, "
                    f"{field}={{{', '.join(f'{n!r}: ...' for n in required)}}}"
                    if required
                    else f"leave {field} out (the model requires no data) or give its "
                    "arguments by name"
                ),
                field="dataset",
            ) from exc
        if missing:
            given = f"gives {sorted(names)}" if names else "is omitted"
            fix = (
                f"{field} {given}, but {name}{sig} requires {missing}; give them by "
                f"name, {field}={{{', '.join(f'{n!r}: ...' for n in required)}}}"
            )
        elif unknown:
            fix = (
                f"{field} names {unknown}, which {name}{sig} does not take; drop them, or "
                "add them to the model's signature"
            )
        else:
            fix = f"{field} does not bind to {name}{sig}: {exc}"
        raise ConfigError(
            f"{fix} (a dict that is not {{'x': X, 'y': Y}} reaches the model by its own "
            "argument names)",
            field="dataset",
        ) from exc


def takes_no_data(model: Any) -> bool:
    """Whether ``model()`` binds: every argument has a default (or is bound by keyword)."""
    import inspect

    try:
        inspect.signature(model).bind()
    except TypeError:
        return False
    except ValueError:  # no signature to read: assume it needs its data
        return False
    return True
