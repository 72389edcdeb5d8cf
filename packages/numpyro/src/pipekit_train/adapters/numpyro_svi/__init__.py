"""The ``numpyro-svi`` backend: stochastic variational inference on a ``NumpyroTask``.

``max_steps`` SVI steps (``svi.update``, fused ``steps_per_call`` at a time by core's
program builder, never ``svi.run``) on minibatches of ``batch_size`` from core's
batch source. The guide is ``NumpyroTask.guide`` (default ``AutoNormal``), the
objective ``NumpyroTask.loss`` (default ``Trace_ELBO()``), the optimiser
``optimizer_config`` resolved to optax and wrapped with
``numpyro.optim.optax_to_numpyro``. Evaluation reports ``val_elbo`` on
``val_dataset``; checkpoints hold the ``SVIState``; ``backend_info["final_elbo"]``
is the last step's ELBO estimate.

Minibatches: a model ``model(x, y=None, N=None)`` gets ``N = len(dataset)`` bound
(``functools.partial``) so ``numpyro.plate("data", N, subsample_size=x.shape[0])``
scales each batch's likelihood by N/B. A model without ``N`` needs
``batch_size == len(dataset)``.

``backend_options``: ``steps_per_call``, ``worker_count``, ``shuffle``, ``resume``, ``x64``.
"""

from ._options import SviOptions, parse_options
from ._run import bind_data_size, run

__all__ = ["run", "SviOptions", "parse_options", "bind_data_size"]
