"""The study table: one row per trial (number, state, value, params, folder)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["study_rows", "format_rows", "load_study"]


def load_study(folder: str | Path) -> Any:
    """The Optuna study of the sweep folder ``folder`` (read from its ``sweep.json``)."""
    import json

    from ..errors import ConfigError
    from ._optuna import import_optuna, open_storage

    meta = Path(folder) / "sweep.json"
    if not meta.is_file():
        raise ConfigError(
            f"{folder} is not a sweep folder (no sweep.json); run the sweep first", field="folder"
        )
    info = json.loads(meta.read_text())
    optuna = import_optuna()
    return optuna.load_study(study_name=info["study_name"], storage=open_storage(info["storage"]))


def study_rows(study: Any) -> list[dict[str, Any]]:
    """Each trial as ``{number, state, value, params, final_metrics, pruned_at}``."""
    return [
        {
            "number": t.number,
            "state": t.state.name,
            "value": t.value,
            "params": dict(t.params),
            "final_metrics": t.user_attrs.get("final_metrics"),
            "pruned_at": t.user_attrs.get("pipekit_pruned_at"),
        }
        for t in study.get_trials(deepcopy=False)
    ]


def format_rows(rows: list[dict[str, Any]], best: int | None = None) -> str:
    """The rows as an aligned text table; the best trial marked with ``*``."""
    names = sorted({k for r in rows for k in r["params"]})
    header = ["trial", "state", "value", *names]
    lines = [header]
    for r in rows:
        value = "" if r["value"] is None else f"{r['value']:.6g}"
        cells = [f"{r['number']}{'*' if r['number'] == best else ''}", r["state"], value]
        for n in names:
            v = r["params"].get(n)
            cells.append("" if v is None else (f"{v:.4g}" if isinstance(v, float) else str(v)))
        lines.append(cells)
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() for line in lines
    )
