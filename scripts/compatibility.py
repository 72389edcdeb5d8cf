"""docs/compatibility.md, written from the nox matrix and checked by every cell of it.

Each ``tests-<dist>`` cell (``locked`` or ``lowest``, one Python) calls, with its own venv's
Python, after installing and before its tests::

    python scripts/compatibility.py record --session tests-equinox --resolution lowest \\
        --packages jax optax ... --requirements "jax>=0.6" ...

which writes ``.nox/matrix/<session>.<resolution>.py<X.Y>.json`` (the installed version of each
package the distribution declares), and after its tests ``… check --session … --resolution …``,
which fails when docs/compatibility.md disagrees with that record — the table is stale.
``python scripts/compatibility.py write`` rewrites the table from the records found under
``.nox/matrix`` (the columns of cells that did not run here are kept).

Standard library only: it runs in every cell's venv.
"""

from __future__ import annotations

import argparse
import importlib.metadata as md
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "compatibility.md"
RECORDS = ROOT / ".nox" / "matrix"

HEADER = """\
# Compatibility

Every distribution declares version ranges for the frameworks it uses, and each range is tested
at both ends: `nox -t ci` runs every `tests-<dist>` session in two cells, `locked` (the versions
in `uv.lock`) and `lowest` (the distribution's wheel installed outside the lock with
`uv pip install --resolution lowest-direct`, so every declared range resolves to its floor).
The tables below are the versions those cells installed; each cell fails when its column here
is stale (`scripts/compatibility.py`); a Python with no column yet is reported, not failed.
Regenerate with `python scripts/compatibility.py write` after running the cells
(`PIPEKIT_COMPAT_WRITE=1 nox -s "tests-equinox-3.11(lowest)"`, or `nox -t ci`). Why each floor
is where it is: [decision 0168](decisions/0168-version-floors.md).

A `lowest` cell runs the tests marked `lowest` (`pytest -m lowest`: the README example, a real
SIGKILL bit-identical resume, a bad option refused before compiling, an operator saved and
loaded); a `locked` cell runs the whole folder.
"""

_SECTION_RE = re.compile(r"^## `(?P<session>[^`]+)`\n(?P<body>.*?)(?=^## |\Z)", re.M | re.S)


def _column(resolution: str, python: str) -> str:
    return f"{resolution} · Python {python}"


def _declared(name: str, requirements: list[str]) -> str:
    from_name = re.compile(rf"^{re.escape(name)}(?![\w.-])\s*(\[[^\]]*\])?(?P<spec>[^;]*)", re.I)
    for text in requirements:
        m = from_name.match(text.replace("_", "-"))
        if m:
            return m["spec"].strip() or "any"
    return "any"


def parse(doc: str) -> dict[str, dict]:
    """session → {"rows": {package: {column: version}}, "declared": {package: range}}."""
    found: dict[str, dict] = {}
    for m in _SECTION_RE.finditer(doc):
        lines = [ln for ln in m["body"].splitlines() if ln.startswith("|")]
        if len(lines) < 2:
            continue
        head = [c.strip() for c in lines[0].strip("|").split("|")]
        rows: dict[str, dict[str, str]] = {}
        declared: dict[str, str] = {}
        for line in lines[2:]:
            cells = [c.strip().strip("`") for c in line.strip("|").split("|")]
            package = cells[0]
            declared[package] = cells[1]
            rows[package] = {col: val for col, val in zip(head[2:], cells[2:], strict=False)}
        found[m["session"]] = {"rows": rows, "declared": declared, "columns": head[2:]}
    return found


def render(tables: dict[str, dict]) -> str:
    out = [HEADER]
    for session in sorted(tables, key=_session_order):
        table = tables[session]
        columns = sorted(table["columns"], key=lambda c: (c.split(" · ")[1], c))
        out.append(f"\n## `{session}`\n")
        out.append("| package | declared | " + " | ".join(columns) + " |")
        out.append("|---|---|" + "---|" * len(columns))
        for package, versions in table["rows"].items():
            cells = [versions.get(col, "—") for col in columns]
            declared = table["declared"].get(package, "any")
            out.append(f"| `{package}` | `{declared}` | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


_ORDER = ["core", "core-jax", "equinox", "bayes", "numpyro", "blackjax", "lightning", "keras"]


def _session_order(session: str) -> tuple[int, str]:
    tail = session.removeprefix("tests-")
    return (_ORDER.index(tail) if tail in _ORDER else len(_ORDER), session)


def record(args: argparse.Namespace) -> int:
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    versions = {}
    for name in args.packages:
        try:
            versions[name] = md.version(name)
        except md.PackageNotFoundError:
            versions[name] = "not installed"
    rec = {
        "session": args.session,
        "resolution": args.resolution,
        "python": python,
        "versions": versions,
        "declared": {name: _declared(name, args.requirements) for name in args.packages},
    }
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"{args.session}.{args.resolution}.py{python}.json"
    path.write_text(json.dumps(rec, indent=1), encoding="utf-8")
    print(f"{args.session} ({args.resolution}, Python {python}):")
    for name, version in versions.items():
        print(f"  {name:<20} {version:<14} declared {rec['declared'][name]}")
    return 0


def check(rec: dict) -> int:
    """0 when docs/compatibility.md's column for this cell says what was installed.

    A session with no table fails; a Python with no column yet is reported and passes.
    """
    tables = parse(DOC.read_text(encoding="utf-8")) if DOC.exists() else {}
    column = _column(rec["resolution"], rec["python"])
    table = tables.get(rec["session"])
    stale = []
    if table is not None and column not in table["columns"]:
        # An interpreter the table has not seen yet (a machine with Python 3.12 runs its cells
        # with no edit): said, not failed. The columns the table has are still checked.
        print(
            f"docs/compatibility.md has no '{column}' column for {rec['session']} yet; "
            "`python scripts/compatibility.py write` adds it from this cell's record"
        )
        return 0
    if table is None:
        stale.append(f"no table for {rec['session']}")
    else:
        for name, version in rec["versions"].items():
            shown = table["rows"].get(name, {}).get(column)
            if shown != version:
                stale.append(f"{name}: installed {version}, the table says {shown}")
            if table["declared"].get(name) != rec["declared"][name]:
                stale.append(
                    f"{name}: declared {rec['declared'][name]}, "
                    f"the table says {table['declared'].get(name)}"
                )
        for name in set(table["rows"]) - set(rec["versions"]):
            stale.append(f"{name} is in the table but no longer declared")
    if stale:
        print(
            f"docs/compatibility.md is stale for {rec['session']} ({column}):",
            *stale,
            "run this cell, then `python scripts/compatibility.py write`, and commit the table",
            sep="\n  ",
            file=sys.stderr,
        )
        return 1
    return 0


def write(args: argparse.Namespace) -> int:
    tables = parse(DOC.read_text(encoding="utf-8")) if DOC.exists() else {}
    records = [json.loads(p.read_text()) for p in sorted(args.records.glob("*.json"))]
    if not records:
        print(f"no cell records under {args.records}: run the matrix first", file=sys.stderr)
        return 1
    for rec in records:
        column = _column(rec["resolution"], rec["python"])
        table = tables.setdefault(rec["session"], {"rows": {}, "declared": {}, "columns": []})
        # packages no longer declared leave the table; new ones join it
        table["rows"] = {k: v for k, v in table["rows"].items() if k in rec["versions"]}
        for name, version in rec["versions"].items():
            table["rows"].setdefault(name, {})[column] = version
            table["declared"][name] = rec["declared"][name]
        if column not in table["columns"]:
            table["columns"].append(column)
    DOC.write_text(render(tables), encoding="utf-8")
    print(f"wrote {DOC.relative_to(ROOT)} from {len(records)} cell records")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="record this venv's versions and check the table")
    rec.add_argument("--session", required=True)
    rec.add_argument("--resolution", required=True, choices=["locked", "lowest"])
    rec.add_argument("--packages", nargs="+", required=True)
    rec.add_argument("--requirements", nargs="*", default=[], help="the declared requirements")
    rec.add_argument("--out", type=Path, default=RECORDS)
    wr = sub.add_parser("write", help="rewrite docs/compatibility.md from the cell records")
    wr.add_argument("--records", type=Path, default=RECORDS)
    chk = sub.add_parser("check", help="fail when the table disagrees with a cell's record")
    chk.add_argument("--session", required=True)
    chk.add_argument("--resolution", required=True, choices=["locked", "lowest"])
    chk.add_argument("--out", type=Path, default=RECORDS)
    args = parser.parse_args(argv)
    if args.command == "check":
        python = f"{sys.version_info.major}.{sys.version_info.minor}"
        path = args.out / f"{args.session}.{args.resolution}.py{python}.json"
        return check(json.loads(path.read_text(encoding="utf-8")))
    return record(args) if args.command == "record" else write(args)


if __name__ == "__main__":
    sys.exit(main())
