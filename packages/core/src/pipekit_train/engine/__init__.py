"""The engine: the one face every backend stands on.

Per-step backends hand :func:`run_driver` a :class:`StepProgram` (JAX backends
build one with ``pipekit_train.jax.program.build_program``); the Lightning and
Keras bridges drive their library's loop and call the same :func:`host_event`
at the steps a :class:`Schedule` names. Callbacks and writers run through one
:class:`CallbackRunner`. The data layer (every accepted dataset form normalised and checked, the
deterministic per-step order, the label checks) is here too, for every backend;
it imports numpy only inside its functions. Pure Python at import: nothing here
imports an array library.
"""

from ._data_forms import ACCEPTED_FORMS as ACCEPTED_FORMS
from ._data_forms import Dataset as Dataset
from ._data_forms import RecordSource as RecordSource
from ._data_forms import dataset_rows as dataset_rows
from ._data_forms import describe_dataset as describe_dataset
from ._data_forms import gather_rows as gather_rows
from ._data_forms import materialize as materialize
from ._data_forms import normalize_dataset as normalize_dataset
from ._data_labels import check_labels as check_labels
from ._data_labels import output_width as output_width
from ._data_order import BatchIterator as BatchIterator
from ._data_order import BatchSource as BatchSource
from ._data_order import eval_batches as eval_batches
from ._driver import DriverResult as DriverResult
from ._driver import run_driver as run_driver
from ._events import EventOutcome as EventOutcome
from ._events import EventSite as EventSite
from ._events import host_event as host_event
from ._events import record_window as record_window
from ._program import BatchStream as BatchStream
from ._program import Phase as Phase
from ._program import StepCheckpointer as StepCheckpointer
from ._program import StepProgram as StepProgram
from ._runner import CallbackRunner as CallbackRunner
from ._schedule import Schedule as Schedule
from ._schedule import event_intervals as event_intervals
from ._schedule import next_event_step as next_event_step

__all__ = [
    "ACCEPTED_FORMS",
    "BatchIterator",
    "BatchSource",
    "Dataset",
    "RecordSource",
    "check_labels",
    "dataset_rows",
    "describe_dataset",
    "eval_batches",
    "gather_rows",
    "materialize",
    "normalize_dataset",
    "output_width",
    "BatchStream",
    "CallbackRunner",
    "DriverResult",
    "EventOutcome",
    "EventSite",
    "Phase",
    "Schedule",
    "StepCheckpointer",
    "StepProgram",
    "event_intervals",
    "host_event",
    "next_event_step",
    "record_window",
    "run_driver",
]
