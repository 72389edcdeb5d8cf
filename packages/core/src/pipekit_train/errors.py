"""The error hierarchy every pipekit-train failure is reported through.

A user mistake is reported in the user's own terms: the exception names the
field (``TrainingLoop.batch_size``, ``optimizer_config.lr.decay_steps``, …) and
says how to fix it. Each class also subclasses the builtin that a caller would
naturally catch (``ValueError`` for bad values, ``ImportError`` for a missing
distribution) so generic handlers keep working.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from ._warn import warn_user

__all__ = [
    "PipekitError",
    "ConfigError",
    "BackendNotInstalledError",
    "CheckpointError",
    "UntrustedCodeError",
    "DataError",
    "TrainingError",
    "FinishError",
    "LogsNotFoundError",
    "ExtraNotInstalledError",
    "closest",
    "warn_user",
]


class PipekitError(Exception):
    """Base class of every error pipekit-train raises on purpose."""


class ConfigError(PipekitError, ValueError):
    """A ``TrainingLoop`` field (or YAML key) has a wrong type, range or value.

    ``field`` holds the dotted name of the offending field when one applies.
    """

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class BackendNotInstalledError(PipekitError, ImportError):
    """The requested backend's distribution is not installed.

    The message carries the exact ``pip install pipekit-train-…`` command.
    """


class CheckpointError(PipekitError):
    """A checkpoint directory cannot be used: unwritable, incompatible or unreadable."""


class UntrustedCodeError(CheckpointError):
    """A saved folder names code (an import string) that the caller did not allow to run.

    Raised by ``JaxModelOp.load``, ``TorchModelOp.load`` and ``NumpyroPredictiveOp.load``
    *before* anything is imported. The message shows the recorded string, the field that
    held it and both ways on: pass the code yourself (``factory=`` / ``like=`` / ``model=``
    / ``predict_fn=``), or ``trusted=True`` ("this folder can run code"). A
    ``CheckpointError``, so handlers of unusable saved artifacts catch it too.
    """


class DataError(PipekitError, ValueError):
    """A dataset is malformed: empty, ragged, too small for the batch size, …"""


class TrainingError(PipekitError):
    """Training stopped on a condition the user asked to be fatal (e.g. NaN loss)."""


class FinishError(PipekitError):
    """The run trained to its end, but building what it returns failed after the last step.

    Raised by ``TrainingLoop.run`` when the trained operator or the run report cannot be
    built (the user's op class, a guide draw, a predictive call, a callback's
    ``on_run_end``). The message names the stage and the call that failed, the final
    checkpoint (committed before that stage began, so it is safe) and what a rerun does:
    it resumes from that checkpoint, runs no steps and builds the operator and the report
    again. The original exception is ``__cause__``; ``stage``, ``final_step`` and
    ``checkpoint_step`` hold the facts.
    """

    def __init__(
        self,
        message: str,
        *,
        stage: str,
        final_step: int,
        checkpoint_step: int | None,
    ) -> None:
        super().__init__(message)
        self.stage = stage
        self.final_step = final_step
        self.checkpoint_step = checkpoint_step


class LogsNotFoundError(PipekitError, FileNotFoundError):
    """A run folder holds no metric logs to read (``pipekit-train plot``).

    The message names the folder, where logs were looked for, and the
    ``metric_writer`` setting that writes them.
    """


class ExtraNotInstalledError(PipekitError, ImportError):
    """An optional feature's library is missing; the message has the ``pip install`` command."""


def closest(name: str, valid: Iterable[str]) -> str:
    """Return a ``" (did you mean 'x'?)"`` hint for ``name`` or an empty string.

    Case-insensitive: ``"adamW"`` suggests ``'adamw'`` (not ``'adam'``), and the
    suggestion is spelled as in ``valid``.
    """
    options = list(valid)
    by_lower: dict[str, str] = {}
    for option in options:
        by_lower.setdefault(option.lower(), option)
    key = str(name).lower()
    if key in by_lower and by_lower[key] != name:
        return f" (did you mean {by_lower[key]!r}?)"
    plausible = [o for o in by_lower if _plausibly_meant(key, o)]
    if not plausible:
        return ""
    best = max(plausible, key=lambda o: difflib.SequenceMatcher(None, key, o).ratio())
    return f" (did you mean {by_lower[best]!r}?)"


#: The similarity above which a name reads as a misspelling of another (difflib's ratio).
#: At 0.5, ``step_size`` suggested ``num_steps`` (0.56) — a different option, not a typo.
_SIMILAR = 0.7


def _one_edit_apart(a: str, b: str) -> bool:
    """One insertion, deletion, substitution or swap of neighbours (``sdg`` → ``sgd``)."""
    if a == b or abs(len(a) - len(b)) > 1:
        return a == b
    if len(a) == len(b):
        diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
        if len(diff) == 1:
            return True
        i = diff[0] if len(diff) == 2 else -1
        return len(diff) == 2 and diff[1] == i + 1 and a[i] == b[i + 1] and a[i + 1] == b[i]
    short, long = (a, b) if len(a) < len(b) else (b, a)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))


def _subsequence(short: str, long: str) -> bool:
    """Whether the letters of ``short`` appear in ``long`` in order."""
    rest = iter(long)
    return all(ch in rest for ch in short)


def _plausibly_meant(name: str, option: str) -> bool:
    """Whether ``option`` is a name a user who wrote ``name`` plausibly meant: a misspelling
    (one edit, or similar as a whole), an abbreviation (``b1`` / ``beta1``) or the same
    words with some left out (``dense_mass`` / ``dense_mass_matrix``)."""
    if min(len(name), len(option)) >= 3 and _one_edit_apart(name, option):
        return True
    short, long = sorted((name, option), key=len)
    if len(short) >= 2 and short[0] == long[0] and _subsequence(short, long):
        return True  # an abbreviation: b1 / beta1, lr / learning_rate
    words, option_words = set(name.split("_")) - {""}, set(option.split("_")) - {""}
    if words and option_words and (words <= option_words or option_words <= words):
        return True
    return difflib.SequenceMatcher(None, name, option).ratio() >= _SIMILAR
