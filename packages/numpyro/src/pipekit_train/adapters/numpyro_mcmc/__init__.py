"""The ``numpyro-mcmc`` backend: NUTS (or HMC) on a ``NumpyroTask``, chunked and checkpointed.

``TrainingLoop(task=NumpyroTask(model=...), dataset=(x, y), backend="numpyro-mcmc").run()``
samples ``num_chains`` chains of ``num_warmup`` + ``num_samples`` steps and returns a
``NumpyroPredictiveOp`` and ``backend_info`` (ArviZ diagnostics, warnings).

To the user it is one sampling call; underneath, core's driver runs it in chunks
(phases ``warmup`` and ``sampling``), checkpointing after warmup and every
``Checkpoint.every_n_steps`` steps, so a killed run resumes — and its draws are
bit-identical to an uninterrupted run and to NumPyro's own ``MCMC.run`` with the
same seed (``TrainingLoop.seed``) and settings (``dense_mass=True`` with vectorised
chains: to rounding only, see docs/decisions/0127-dense-mass-bit-identity.md).

``backend_options``: ``kernel`` (``"nuts"`` | ``"hmc"``, or in Python a user-built
``numpyro.infer.HMC`` / ``NUTS`` on the task's model, used as built: ``_user_kernel``),
``chain_method`` (``"vectorized"`` | ``"sequential"``), ``dense_mass`` (bool or site groups),
``target_accept`` (alias ``target_accept_prob``), ``max_tree_depth`` (alias
``max_num_doublings``), ``step_size``, ``adapt_step_size``, ``adapt_mass_matrix``,
``inverse_mass_matrix``, ``forward_mode_differentiation``, ``num_steps`` (alias
``num_integration_steps``) / ``trajectory_length`` (HMC), ``regularize_mass_matrix``,
``init_strategy`` (``uniform`` | ``median`` | ``mean`` | ``feasible`` | ``sample``),
``init_values`` (``{site: value}``), ``init_jitter``, ``x64`` (float64, the default),
``resume`` (``auto`` | ``never`` | ``force``), ``steps_per_call`` (largest chunk).
``max_steps``, ``batch_size`` and ``optimizer_config`` do not apply (a warning names them).
"""

from ._options import McmcOptions, parse_options
from ._run import run

__all__ = ["run", "McmcOptions", "parse_options"]
