"""A user-built ``numpyro.infer`` kernel as ``backend_options["kernel"]`` (issue 20, Python only).

``backend_options={"kernel": NUTS(model, target_accept_prob=0.9, max_tree_depth=5)}``:
the kernel is used as built — its step size, mass matrix, adaptation, tree depth and
init strategy are its own — and pipekit adds only what is not a kernel setting (the
chunked, checkpointed run; ``chain_method``, ``x64``, ``steps_per_call``, ``resume``).

- The kernel must be an ``HMC`` or ``NUTS`` (subclasses included): the driver's draw
  records ``HMCState``'s statistics (``diverging``, ``accept_prob``, …).
- Its model must be the task's model (the same object): the task's model is what the
  predictive op and the diagnostics use. A kernel built on a ``potential_fn`` has none.
- A kernel-setting backend option (``dense_mass``, ``target_accept``, ``max_tree_depth``,
  ``num_steps``, ``trajectory_length``, ``regularize_mass_matrix``, ``init_strategy``,
  ``init_values``) given next to the kernel is the kernel's job: a value equal to the
  kernel's own is accepted, any other is a ``ConfigError`` naming both.
- The resume guard records the kernel's settings (:func:`kernel_settings`).
"""

from __future__ import annotations

import functools
from typing import Any

from pipekit_train.errors import ConfigError

from ._options import McmcOptions

__all__ = ["check_user_kernel", "kernel_settings"]

#: backend option → the kernel attribute holding the same setting.
_SETTINGS = {
    "dense_mass": "_dense_mass",
    "target_accept": "_target_accept_prob",
    "max_tree_depth": "_max_tree_depth",
    "num_steps": "_num_steps",
    "trajectory_length": "_trajectory_length",
    "regularize_mass_matrix": "_regularize_mass_matrix",
    "step_size": "_step_size",
    "adapt_step_size": "_adapt_step_size",
    "adapt_mass_matrix": "_adapt_mass_matrix",
    "forward_mode_differentiation": "_forward_mode_differentiation",
}
#: The kernel's own argument names, for the messages.
_ARGUMENT = {
    "dense_mass": "dense_mass",
    "target_accept": "target_accept_prob",
    "max_tree_depth": "max_tree_depth",
    "num_steps": "num_steps",
    "trajectory_length": "trajectory_length",
    "regularize_mass_matrix": "regularize_mass_matrix",
    "step_size": "step_size",
    "adapt_step_size": "adapt_step_size",
    "adapt_mass_matrix": "adapt_mass_matrix",
    "forward_mode_differentiation": "forward_mode_differentiation",
}
_RECORDED = (
    "_step_size",
    "_adapt_step_size",
    "_adapt_mass_matrix",
    "_find_heuristic_step_size",
    "_forward_mode_differentiation",
    "_algo",
)


def _name(kernel: Any) -> str:
    return type(kernel).__name__


def _strategy_name(fn: Any) -> str:
    """A stable name for an init strategy (a function or a ``functools.partial``)."""
    if isinstance(fn, functools.partial):
        kwargs = ", ".join(f"{k}={v!r}" for k, v in sorted(fn.keywords.items()) if k != "values")
        return f"{_strategy_name(fn.func)}({kwargs})"
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', type(fn).__name__)}"


def check_user_kernel(kernel: Any, task: Any, options: Any, raw: dict[str, Any]) -> None:
    """Refuse a kernel that cannot run here or that a backend option contradicts."""
    from numpyro.infer import HMC

    if not isinstance(kernel, HMC):
        raise ConfigError(
            f"backend_options.kernel is a {_name(kernel)}; numpyro-mcmc runs HMC and NUTS kernel "
            "objects (numpyro.infer.HMC, numpyro.infer.NUTS, or a subclass), or the names "
            "'nuts' / 'hmc'",
            field="backend_options.kernel",
        )
    model = getattr(kernel, "model", None)
    if model is not task.model:
        what = "no model (it was built on a potential_fn)" if model is None else "another model"
        raise ConfigError(
            f"backend_options.kernel: the {_name(kernel)} has {what}, but task.model is "
            f"{getattr(task.model, '__qualname__', task.model)!r}; build the kernel on the "
            f"task's model: {_name(kernel)}(task.model, ...)",
            field="backend_options.kernel",
        )
    if getattr(task, "model_kwargs", None):
        raise ConfigError(
            f"task.model_kwargs ({sorted(task.model_kwargs)}) cannot reach the model of "
            f"backend_options.kernel, a {_name(kernel)} built on task.model itself; drop "
            "model_kwargs and give their values as defaults of the model's keywords, or pass "
            "the kernel by name ('nuts' / 'hmc') with its settings as backend_options",
            field="task.model_kwargs",
        )
    defaults = McmcOptions()
    for option, attr in _SETTINGS.items():
        given = getattr(options, option)
        if option not in raw and given == getattr(defaults, option):
            continue  # not set by the user: the kernel's own value is used
        own = getattr(kernel, attr, None)
        if given != own:
            raise ConfigError(
                f"backend_options.{option}={given!r} contradicts backend_options.kernel, a "
                f"{_name(kernel)} built with {_ARGUMENT[option]}={own!r}; the kernel's own "
                f"settings are used: drop backend_options.{option}, or build the kernel with "
                f"{_ARGUMENT[option]}={given!r}",
                field=f"backend_options.{option}",
            )
    for option in ("init_strategy", "init_values", "init_jitter", "inverse_mass_matrix"):
        if option in raw:
            raise ConfigError(
                f"backend_options.{option} contradicts backend_options.kernel, a "
                f"{_name(kernel)} with its own init_strategy "
                f"({_strategy_name(getattr(kernel, '_init_strategy', None))}) and mass "
                f"matrix; drop backend_options.{option}, or give it to the kernel you build",
                field=f"backend_options.{option}",
            )


def kernel_settings(kernel: Any) -> dict[str, Any]:
    """The kernel's settings as plain values, for the resume guard (never reprs)."""
    out: dict[str, Any] = {"kernel": f"{type(kernel).__module__}.{type(kernel).__qualname__}"}
    for option, attr in _SETTINGS.items():
        out[_ARGUMENT[option]] = getattr(kernel, attr, None)
    for attr in _RECORDED:
        value = getattr(kernel, attr, None)
        out[attr.lstrip("_")] = value if isinstance(value, (bool, int, float, str)) else None
    out["init_strategy"] = _strategy_name(getattr(kernel, "_init_strategy", None))
    mass = getattr(kernel, "_inverse_mass_matrix", None)
    out["inverse_mass_matrix"] = None if mass is None else _digest(mass)
    return out


def _digest(tree: Any) -> str:
    """A digest of a user-given inverse mass matrix (its arrays' dtypes, shapes and bytes)."""
    import hashlib

    import jax
    import numpy as np

    h = hashlib.sha256()
    for path, leaf in jax.tree_util.tree_flatten_with_path(tree)[0]:
        a = np.ascontiguousarray(np.asarray(leaf))
        h.update(f"{jax.tree_util.keystr(path)}{a.dtype}{a.shape}".encode())
        h.update(a.tobytes())
    return h.hexdigest()[:16]
