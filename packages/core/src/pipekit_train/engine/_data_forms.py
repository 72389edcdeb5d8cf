"""Every accepted dataset form → one of two shapes, each checked once (numpy only).

The one entry point is :func:`normalize_dataset`: a dict of equal-length arrays with
keys ``"x"`` (and ``"y"``, and any named extras), a tuple ``(x, y)``, an sklearn
``Bunch`` (a dict), or a map-style source (``__len__`` + ``__getitem__`` returning such
a dict or tuple per record, a ``grain.MapDataset`` included) becomes either a dict of
numpy arrays or a :class:`RecordSource` (read lazily, record by record). Every backend
reads its data through it, so every backend refuses the same mistakes with the same
:class:`~pipekit_train.errors.DataError`, naming the field (``TrainingLoop.dataset`` /
``TrainingLoop.val_dataset``) before anything compiles:

- an object-dtype or string array (what would otherwise die inside optree, JAX or
  torch's collation);
- a ragged column (rows of different shapes: numpy's "inhomogeneous shape");
- arrays of different lengths, an empty dataset;
- NaN or inf in a floating column (one vectorised pass; a NaN in the data makes every
  parameter NaN after one step).

Why here and not under ``pipekit_train.jax``: none of it needs JAX, and the Lightning
backend (torch only) needs the same checks. numpy is imported inside the functions, so
``import pipekit_train.engine`` loads no array library.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

from pipekit_train.errors import BackendNotInstalledError, DataError

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "ACCEPTED_FORMS",
    "Dataset",
    "RecordSource",
    "dataset_rows",
    "describe_dataset",
    "gather_rows",
    "is_grain_map_dataset",
    "materialize",
    "normalize_dataset",
    "refuse_endless",
]

#: What ``dataset`` / ``val_dataset`` may be, for error messages.
ACCEPTED_FORMS = (
    "a dict of equal-length arrays with keys 'x' and 'y', a tuple (x, y) of arrays, "
    "an indexable object (__len__ + __getitem__ returning such a dict or tuple), "
    "or a grain.MapDataset"
)


def _numpy() -> Any:
    try:
        import numpy
    except ImportError as exc:  # pragma: no cover - every backend brings numpy
        raise BackendNotInstalledError(
            f"pipekit's data layer needs numpy ({exc}); every backend distribution brings it: "
            "pip install pipekit-train-<backend>"
        ) from exc
    return numpy


def _rows(a: Any) -> int:
    shape = _numpy().shape(a)
    return int(shape[0]) if shape else 0


def _record_keys(record: Any, field: str, index: int) -> tuple[str, ...]:
    """The canonical key tuple of one record (a dict with 'x', or an (x, y) tuple)."""
    if isinstance(record, Mapping):
        if "x" not in record:
            raise DataError(
                f"{field}: record {index} has keys {sorted(record)} but no 'x' key; "
                "records must be dicts with keys 'x' and 'y' or (x, y) tuples."
            )
        return tuple(record.keys())
    if isinstance(record, (tuple, list)) and len(record) == 2:
        return ("x", "y")
    raise DataError(
        f"{field}: record {index} is a {type(record).__name__}; each record must be a "
        "dict with keys 'x' and 'y' or an (x, y) tuple."
    )


def _as_column(value: Any, field: str, key: str) -> np.ndarray:
    """``value`` as a numeric numpy array; ``DataError`` for ragged or non-numeric data."""
    np = _numpy()
    try:
        a = np.asarray(value)
    except ValueError as exc:  # numpy >= 1.24: "inhomogeneous shape after N dimensions"
        raise DataError(
            f"{field}[{key!r}] is ragged: its rows do not all have the same shape ({exc}). "
            "Pad or crop every example to one shape (or give a map-style source whose "
            "records share a shape)."
        ) from None
    _check_dtype(a, field, key)
    return a


def _check_dtype(a: np.ndarray, field: str, key: str) -> None:
    """``DataError`` for an object, string or structured array (no backend can train on it)."""
    if a.dtype.kind not in "OUSV":
        return
    np = _numpy()
    hint = ""
    if a.dtype.kind == "O" and a.ndim and a.size:
        shapes = {np.shape(v) for v in a.reshape(-1)[:1000]}
        if len(shapes) > 1:
            hint = f" Its elements have different shapes ({sorted(shapes)[:3]} …): it is ragged."
    raise DataError(
        f"{field}[{key!r}] has dtype {a.dtype} ({a.dtype.kind!r}: not numeric), which no backend "
        f"can train on.{hint} Convert it to one numeric array first, e.g. "
        "np.stack(list(column)).astype(np.float32) for a column of equal-shape arrays, or "
        "encode strings as integer labels."
    )


def _check_finite(a: np.ndarray, field: str, key: str, rows: Any = None) -> None:
    """Raise :class:`DataError` naming ``field``, ``key`` and the first row holding NaN/inf.

    One vectorised ``isfinite`` pass over floating (and complex) arrays; integer and
    boolean arrays cannot hold NaN and are skipped. Locating the row costs a second
    pass, only when there is one to report. ``rows`` maps a row of ``a`` to the
    record index it came from (a gathered batch of a :class:`RecordSource`).
    """
    np = _numpy()
    if a.dtype.kind not in "fc" or np.isfinite(a).all():
        return
    bad_rows = ~np.isfinite(a).reshape(a.shape[0], -1).all(axis=1) if a.ndim else np.ones(1, bool)
    row = int(np.argmax(bad_rows))
    count = int(bad_rows.sum())
    value = a[row] if a.ndim else a
    flat = np.asarray(value).reshape(-1)
    first = flat[~np.isfinite(flat)][0]
    where = f"row {row}" if rows is None else f"record {int(rows[row])}"
    raise DataError(
        f"{field}[{key!r}] has non-finite values (NaN or inf): first at {where} "
        f"(value {first}), {count} bad row(s) in all. Drop or impute those rows before "
        "training; a NaN in the data makes every parameter NaN after one step."
    )


class RecordSource:
    """A per-record dataset (indexable object or ``grain.MapDataset``).

    Records are fetched one by one and stacked, so this is slower than a dict of
    arrays; it exists so that lazily-loaded datasets need not fit in memory. Each
    gathered batch is checked for shape and dtype (cheap, and what would otherwise fail
    inside the library); NaN/inf is checked only where the whole source is read at once
    (:func:`materialize`): a check per training batch would stop a run mid-way with a
    ``DataError`` where ``TerminateOnNaN`` is the tool the user chose.
    """

    def __init__(self, obj: Any, field: str) -> None:
        self._obj = obj
        self._field = field
        self._n = len(obj)
        #: A ``grain.MapDataset`` is a pipeline the user built (``.shuffle(seed)``,
        #: ``.repeat()``, ``.map`` …): its index order is the user's, and is kept
        #: (``BatchSource`` reads it in that order; issue 36 item 4).
        self.own_order = is_grain_map_dataset(obj)
        if self._n == 0:
            raise DataError(f"{field} is empty: it needs at least one record.")
        self.keys = _record_keys(obj[0], field, 0)
        last = _record_keys(obj[self._n - 1], field, self._n - 1)
        if set(last) != set(self.keys):
            raise DataError(
                f"{field}: records have inconsistent structure: record 0 has keys "
                f"{list(self.keys)} but record {self._n - 1} has {list(last)}."
            )

    @property
    def field(self) -> str:
        """The user-facing name of the dataset (``TrainingLoop.dataset`` …)."""
        return self._field

    def __len__(self) -> int:
        return self._n

    def __repr__(self) -> str:
        kind = type(self._obj)
        return f"RecordSource({kind.__module__}.{kind.__qualname__}, n={self._n})"

    def gather(self, indices: Sequence[int] | np.ndarray) -> dict[str, np.ndarray]:
        """Fetch the records at ``indices`` and stack each field along a new axis 0."""
        np = _numpy()
        columns: dict[str, list[Any]] = {k: [] for k in self.keys}
        for i in indices:
            record = self._obj[int(i)]
            keys = _record_keys(record, self._field, int(i))
            if set(keys) != set(self.keys):
                raise DataError(
                    f"{self._field}: records have inconsistent structure: record 0 has "
                    f"keys {list(self.keys)} but record {int(i)} has {list(keys)}."
                )
            if isinstance(record, Mapping):
                for k in self.keys:
                    columns[k].append(record[k])
            else:
                columns["x"].append(record[0])
                columns["y"].append(record[1])
        out: dict[str, Any] = {}
        for k, vs in columns.items():
            try:
                out[k] = np.stack([np.asarray(v) for v in vs])
            except ValueError as e:
                raise DataError(
                    f"{self._field}: records have inconsistent shapes and cannot be batched "
                    f"(field {k!r}: {e}); every record must hold the same fields with the "
                    "same per-example shape."
                ) from None
            _check_dtype(out[k], self._field, k)
        return out


Dataset: TypeAlias = "dict[str, np.ndarray] | RecordSource"


def is_grain_map_dataset(obj: Any) -> bool:
    """True for a ``grain.MapDataset`` (any pipeline of one); never imports Grain.

    An object can only be a Grain dataset once its user imported Grain, so a run on
    arrays never pays Grain's import.
    """
    import sys

    map_ds = getattr(sys.modules.get("grain"), "MapDataset", None)
    return isinstance(map_ds, type) and isinstance(obj, map_ds)


def normalize_dataset(dataset: Any, field: str) -> Dataset:
    """Turn any accepted dataset form into a dict of arrays or a :class:`RecordSource`.

    ``field`` is the user-facing name used in error messages
    (e.g. ``"TrainingLoop.dataset"``). A dict of arrays comes back checked (numeric,
    not ragged, equal lengths, finite); a :class:`RecordSource` checks the shape and
    dtype of each batch it gathers (and :func:`materialize` its NaN/inf).
    """
    np = _numpy()
    if isinstance(dataset, RecordSource):
        return dataset
    if isinstance(dataset, Mapping):
        if "x" not in dataset:
            raise DataError(
                f"{field} is a dict without an 'x' key (keys: {sorted(map(str, dataset))}); "
                "it must hold equal-length arrays under 'x' and 'y'."
            )
        arrays = {str(k): _as_column(v, field, str(k)) for k, v in dataset.items()}
        return _check_arrays(arrays, field)
    if isinstance(dataset, tuple):
        if len(dataset) != 2:
            raise DataError(
                f"{field} is a tuple of {len(dataset)} items; a tuple dataset must be (x, y)."
            )
        pair = {"x": _as_column(dataset[0], field, "x"), "y": _as_column(dataset[1], field, "y")}
        return _check_arrays(pair, field)
    if isinstance(dataset, (np.ndarray, str, bytes)) or not (
        hasattr(dataset, "__len__") and hasattr(dataset, "__getitem__")
    ):
        _refuse_stream(dataset, field)
        raise DataError(f"{field} is a {type(dataset).__name__}; expected {ACCEPTED_FORMS}.")
    _refuse_prebatched(dataset, field)
    # grain.MapDataset and any indexable object: per-record access.
    return RecordSource(dataset, field)


def _refuse_stream(dataset: Any, field: str) -> None:
    """A stream (``grain.IterDataset``, iterator factory) is a ``DataError`` here.

    Streams are read by ``pipekit_train.engine._stream`` (the Equinox backend's training
    data only); it is imported only on this error path, and only where it is installed.
    """
    try:
        from ._stream import as_stream
    except ImportError:  # pragma: no cover - a core install without numpy never gets here
        return
    if as_stream(dataset, field) is not None:  # a single-use iterator raises there
        raise DataError(
            f"{field} is a stream ({type(dataset).__name__}); streams (a "
            "grain.IterDataset, an iterator factory) are read as the training dataset of "
            f"the equinox backend only; here give {ACCEPTED_FORMS}."
        )


def _refuse_prebatched(dataset: Any, field: str) -> None:
    """A ``.batch(n)`` Grain ``MapDataset`` would read ``n``-row records: refused by name."""
    if "grain" not in type(dataset).__module__:
        return
    from ._stream import refuse_prebatched

    refuse_prebatched(dataset, field)


def _check_arrays(arrays: dict[str, np.ndarray], field: str) -> dict[str, np.ndarray]:
    n = _rows(arrays["x"])
    if n == 0:
        raise DataError(f"{field} is empty: 'x' has no rows.")
    for k, a in arrays.items():
        if _rows(a) != n:
            raise DataError(
                f"{field}: x has {n} rows but {k} has {_rows(a)} (different lengths); all "
                "arrays must have the same length, one row per example."
            )
        _check_finite(a, field, k)
    return arrays


#: A ``grain.MapDataset`` repeated without ``num_epochs`` has this length (``sys.maxsize``).
_ENDLESS = 2**63 - 1


def refuse_endless(data: Dataset, why: str) -> None:
    """``DataError`` for an endless ``grain.MapDataset`` (``.repeat()``) read from start to end.

    Training reads one by index (its own order), but a validation set or a backend that
    holds the whole dataset would never finish reading it.
    """
    if isinstance(data, RecordSource) and len(data) >= _ENDLESS:
        raise DataError(
            f"{data.field} is an endless grain.MapDataset (.repeat() without num_epochs), "
            f"which {why}: it would never end. Pass the pipeline before .repeat() (one "
            "pass of the data)."
        )


def dataset_rows(data: Dataset) -> int:
    """The number of rows (records) of a normalised dataset."""
    return len(data) if isinstance(data, RecordSource) else _rows(data["x"])


def describe_dataset(data: Dataset) -> str:
    """A stable one-line description (part of ``BatchSource``'s repr, hence the resume guard)."""
    if isinstance(data, RecordSource):
        return repr(data)
    parts = [f"{k}:{a.dtype}{list(a.shape[1:])}" for k, a in data.items()]
    return "{" + ", ".join(parts) + "}"


def gather_rows(data: Dataset, idx: np.ndarray) -> dict[str, np.ndarray]:
    """The rows ``idx`` of a normalised dataset, as a dict of arrays."""
    if isinstance(data, RecordSource):
        return data.gather(idx)
    return {k: a[idx] for k, a in data.items()}


def materialize(dataset: Any, field: str) -> dict[str, np.ndarray]:
    """The whole dataset as one checked dict of arrays (a :class:`RecordSource` read once).

    For backends that hold the full data (the Bayesian ones, Lightning's step batches).
    """
    data = normalize_dataset(dataset, field)
    if isinstance(data, RecordSource):
        refuse_endless(data, "is read whole here")
        indices = _numpy().arange(len(data))
        arrays = data.gather(indices)
        for key, a in arrays.items():
            _check_finite(a, field, key, rows=indices)
        return arrays
    return data
