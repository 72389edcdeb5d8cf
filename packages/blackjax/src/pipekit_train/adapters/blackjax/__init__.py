"""The ``blackjax`` backend: BlackJAX's samplers on the per-step loop, resumable and streaming.

``TrainingLoop(task=NumpyroTask(model=...), dataset=(x, y), backend="blackjax").run()``
samples the model's posterior with NUTS (flip ``backend="numpyro-mcmc"`` for the
same task under NumPyro); ``task=BlackjaxTask(logdensity_fn=..., init_position=...)``
samples a raw log density. Core's driver runs every sampler in chunks, phases
``warmup`` then ``sampling``, with checkpoints (sampler state, adaptation, RNG
step, draws) and bit-identical resume after a kill.

``backend_options``: ``sampler`` (``nuts`` | ``hmc`` | ``mclmc`` | ``pathfinder`` |
``sgld`` | ``sghmc`` | ``smc`` | ``svgd``) and its parameters (see ``SAMPLER_PARAMS``),
plus ``x64`` (float64, the default), ``resume``, ``steps_per_call``,
``compilation_cache``, ``init_values`` (``{site: value}``, a NumPyro task's starts) with
``init_jitter`` and (sgld / sghmc) ``shuffle``. NumPyro's spellings are accepted
(``target_accept_prob``; ``max_num_doublings`` for ``max_tree_depth``).
Returns a ``NumpyroPredictiveOp`` and ``backend_info`` (ArviZ diagnostics).
"""

from ._options import SAMPLER_PARAMS, SAMPLERS, BlackjaxOptions, parse_options
from ._run import run
from ._task import BlackjaxTask

__all__ = ["run", "BlackjaxTask", "BlackjaxOptions", "parse_options", "SAMPLERS", "SAMPLER_PARAMS"]
