"""The Equinox reference backend: Equinox + Optax + Grain + Orbax.

``TrainingLoop(..., backend="equinox").run()`` lands in ``run`` here. The
module surface follows the original design text: ``TrainState``, the
``TrainTask`` protocol, ``train_step``, ``save_state`` / ``restore_state``,
``run``, ``ShardingSpec`` (defined in core, re-exported) and ``JaxModelOp``, the
trained Operator over an Equinox module, and ``run_population``: N trials differing in
run-time hyper-parameters vmapped into one program (``docs/populations.md``).
"""

from pipekit_train.sharding import ShardingSpec

from ._checkpoint import restore_state, save_state
from ._op import JaxModelOp
from ._population import run_population
from ._population_members import member_loop
from ._population_rule import PopulationChoice, population_pays
from ._run import run
from ._state import TrainState
from ._step import train_step
from ._task import SupervisedTask, TrainTask

__all__ = [
    "TrainState",
    "TrainTask",
    "SupervisedTask",
    "train_step",
    "save_state",
    "restore_state",
    "run",
    "ShardingSpec",
    "JaxModelOp",
    "run_population",
    "member_loop",
    "population_pays",
    "PopulationChoice",
]
