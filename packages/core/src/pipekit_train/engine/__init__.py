"""The engine: the one face every backend stands on.

Per-step backends hand :func:`run_driver` a :class:`StepProgram` (JAX backends
build one with ``pipekit_train.jax.program.build_program``); the Lightning and
Keras bridges drive their library's loop and call the same :func:`host_event`
at the steps a :class:`Schedule` names. Callbacks and writers run through one
:class:`CallbackRunner`; every backend's ``backend_info`` is built by
:func:`backend_info` (one schema, ``docs/run-report.md``). Pure Python: nothing
here imports an array library.
"""

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
from ._report import REQUIRED_KEYS as REQUIRED_KEYS
from ._report import BackendInfo as BackendInfo
from ._report import RunOutcome as RunOutcome
from ._report import backend_info as backend_info
from ._runner import CallbackRunner as CallbackRunner
from ._schedule import Schedule as Schedule
from ._schedule import event_intervals as event_intervals
from ._schedule import next_event_step as next_event_step

__all__ = [
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
    "REQUIRED_KEYS",
    "BackendInfo",
    "RunOutcome",
    "backend_info",
]
