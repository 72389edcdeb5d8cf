"""The engine: the one face every backend stands on.

Per-step backends hand :func:`run_driver` a :class:`StepProgram` (JAX backends
build one with ``pipekit_train.jax.program.build_program``); the Lightning and
Keras bridges drive their library's loop and call the same :func:`host_event`
at the steps a :class:`Schedule` names. Callbacks and writers run through one
:class:`CallbackRunner`. Pure Python: nothing here imports an array library.
"""

from ._driver import DriverResult as DriverResult
from ._driver import run_driver as run_driver
from ._events import EventOutcome as EventOutcome
from ._events import EventSite as EventSite
from ._events import host_event as host_event
from ._events import record_window as record_window
from ._options import RESUME_CHOICES as RESUME_CHOICES
from ._options import RESUME_OPTION as RESUME_OPTION
from ._options import OptionSpec as OptionSpec
from ._options import ParsedOptions as ParsedOptions
from ._options import compilation_cache_option as compilation_cache_option
from ._options import optimizer_id_option as optimizer_id_option
from ._options import options_markdown as options_markdown
from ._options import parse_backend_options as parse_backend_options
from ._options import require_instances as require_instances
from ._options import resolve_aliases as resolve_aliases
from ._program import BatchStream as BatchStream
from ._program import Phase as Phase
from ._program import StepCheckpointer as StepCheckpointer
from ._program import StepProgram as StepProgram
from ._runner import CallbackRunner as CallbackRunner
from ._schedule import Schedule as Schedule
from ._schedule import event_intervals as event_intervals
from ._schedule import next_event_step as next_event_step

__all__ = [
    "OptionSpec",
    "ParsedOptions",
    "RESUME_CHOICES",
    "RESUME_OPTION",
    "compilation_cache_option",
    "optimizer_id_option",
    "options_markdown",
    "parse_backend_options",
    "require_instances",
    "resolve_aliases",
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
