"""The engine: the one face every backend stands on.

Per-step backends hand :func:`run_driver` a :class:`StepProgram` (JAX backends
build one with ``pipekit_train.jax.program.build_program``); the Lightning and
Keras bridges drive their library's loop and call the same :func:`host_event`
at the steps a :class:`Schedule` names. Callbacks and writers run through one
:class:`CallbackRunner`; every backend's ``backend_info`` is built by
:func:`backend_info` (one schema, ``docs/run-report.md``). Checkpoints: every store
(Orbax folders, Lightning's torch files) implements :class:`CheckpointStore`, and
:func:`resume_from_store` is the one resume policy over them;
:func:`inspect_checkpoints` reads any backend's folder (files only; the arrays:
``pipekit_train.checkpoints.read_state``). The data
layer (every accepted dataset form normalised and checked, the deterministic
per-step order, the label checks) is here too, for every backend; it imports numpy
only inside its functions. Pure Python at import: nothing here imports an array
library.
"""

from .._checksum import ALGORITHM as CHECKSUM_ALGORITHM
from .._checksum import bytes_checksum as bytes_checksum
from .._signals import StopSignals as StopSignals
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
from ._data_order import refuse_shuffle_option as refuse_shuffle_option
from ._driver import DriverResult as DriverResult
from ._driver import run_driver as run_driver
from ._driver import total_steps as total_steps
from ._events import EventOutcome as EventOutcome
from ._events import EventSite as EventSite
from ._events import host_event as host_event
from ._events import record_window as record_window
from ._inspect import find_checkpoint_files as find_checkpoint_files
from ._inspect import inspect_checkpoints as inspect_checkpoints
from ._inspect import locate_step as locate_step
from ._inspect import open_checkpoint_files as open_checkpoint_files
from ._inspect import read_torch_state as read_torch_state
from ._options import RESUME_OPTION as RESUME_OPTION
from ._options import OptionSpec as OptionSpec
from ._options import ParsedOptions as ParsedOptions
from ._options import compilation_cache_option as compilation_cache_option
from ._options import draws_per_call_option as draws_per_call_option
from ._options import num_data_option as num_data_option
from ._options import optimizer_id_option as optimizer_id_option
from ._options import options_markdown as options_markdown
from ._options import parse_backend_options as parse_backend_options
from ._options import require_instances as require_instances
from ._options import resolve_aliases as resolve_aliases
from ._program import BatchStream as BatchStream
from ._program import Phase as Phase
from ._program import StepCheckpointer as StepCheckpointer
from ._program import StepProgram as StepProgram
from ._program import close_checkpointer as close_checkpointer
from ._report import REQUIRED_KEYS as REQUIRED_KEYS
from ._report import BackendInfo as BackendInfo
from ._report import RunOutcome as RunOutcome
from ._report import after_the_last_step as after_the_last_step
from ._report import backend_info as backend_info
from ._report import finishing as finishing
from ._report import training_ended as training_ended
from ._report import training_started as training_started
from ._resume import RESUME_MODES as RESUME_MODES
from ._resume import STRUCTURE_HINT as STRUCTURE_HINT
from ._resume import ResumeMode as ResumeMode
from ._resume import archive_checkpoints as archive_checkpoints
from ._resume import check_resume_guard as check_resume_guard
from ._resume import parse_resume as parse_resume
from ._resume import quarantine_step as quarantine_step
from ._resume import resume_from_store as resume_from_store
from ._runner import CallbackRunner as CallbackRunner
from ._save_clock import SaveClock as SaveClock
from ._schedule import Schedule as Schedule
from ._schedule import event_intervals as event_intervals
from ._schedule import next_event_step as next_event_step
from ._schedule import regular_chunk as regular_chunk
from ._store import CheckpointStore as CheckpointStore
from ._store import StepFiles as StepFiles
from ._store import StepUnreadable as StepUnreadable
from ._store import ensure_writable as ensure_writable
from ._stream import SizedStream as SizedStream
from ._stream import Stream as Stream
from ._stream import StreamIterator as StreamIterator
from ._stream import as_stream as as_stream
from ._stream import data_size as data_size
from ._stream import refuse_stream as refuse_stream
from ._stream import refuse_stream_options as refuse_stream_options
from ._stream import sized_stream as sized_stream
from ._torch_files import FORMAT as TORCH_FORMAT
from ._torch_files import SUM_SUFFIX as TORCH_SUM_SUFFIX
from ._torch_files import TMP_PREFIX as TORCH_TMP_PREFIX
from ._torch_files import TorchFiles as TorchFiles

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
    "OptionSpec",
    "ParsedOptions",
    "RESUME_OPTION",
    "compilation_cache_option",
    "draws_per_call_option",
    "num_data_option",
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
    "SaveClock",
    "Schedule",
    "StepCheckpointer",
    "StepProgram",
    "event_intervals",
    "regular_chunk",
    "total_steps",
    "host_event",
    "next_event_step",
    "record_window",
    "run_driver",
    "close_checkpointer",
    "REQUIRED_KEYS",
    "BackendInfo",
    "RunOutcome",
    "backend_info",
    "after_the_last_step",
    "finishing",
    "training_ended",
    "training_started",
    # checkpoint stores and the resume policy
    "CheckpointStore",
    "RESUME_MODES",
    "ResumeMode",
    "STRUCTURE_HINT",
    "StepFiles",
    "StepUnreadable",
    "archive_checkpoints",
    "check_resume_guard",
    "find_checkpoint_files",
    "inspect_checkpoints",
    "open_checkpoint_files",
    "parse_resume",
    "quarantine_step",
    "locate_step",
    "read_torch_state",
    "resume_from_store",
    # a user's own stream (a grain.IterDataset or an iterator factory), read as it is
    "SizedStream",
    "Stream",
    "StreamIterator",
    "as_stream",
    "data_size",
    "refuse_stream",
    "refuse_shuffle_option",
    "refuse_stream_options",
    "sized_stream",
    # what a backend's own checkpoint store (Lightning's torch files) builds on
    "CHECKSUM_ALGORITHM",
    "TORCH_FORMAT",
    "TORCH_SUM_SUFFIX",
    "TORCH_TMP_PREFIX",
    "TorchFiles",
    "bytes_checksum",
    "ensure_writable",
    # SIGTERM / Ctrl-C as a request to stop at the next step boundary
    "StopSignals",
]
