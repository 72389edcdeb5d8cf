"""A sweep's population group, in a real SQLite study database: processes taking groups at
once get whole, disjoint groups (one transaction each, so no half-taken population), and a
group whose owner died is adopted WHOLE by exactly one process, its already finished members
included and marked done, so the population resumed is the one its checkpoint holds."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

from pipekit_train.sweep._claims import Claims

TAKER = """
import json, sys
from pipekit_train.sweep._claims import Claims
claims = Claims(sys.argv[1], "s", grace_s=600)
got = []
while group := claims.take_group(12, 4):
    got.append([[s.index, s.group] for s in group])
claims.close()
print(json.dumps(got))
"""

# Every adopter stays alive until all have tried (as in the single-slot adoption test).
ADOPTER = """
import json, os, pathlib, sys, time
from pipekit_train.sweep._claims import Claims
claims = Claims(sys.argv[1], "s", grace_s=600)
group = claims.adopt()
print(json.dumps([[s.index, s.trial_number, s.group, s.done] for s in group]), flush=True)
n = int(sys.argv[2])
barrier = pathlib.Path(sys.argv[1].removeprefix("sqlite:///")).parent / f"tried-{n}"
barrier.mkdir(exist_ok=True)
(barrier / str(os.getpid())).touch()
deadline = time.monotonic() + 100
while len(list(barrier.iterdir())) < n and time.monotonic() < deadline:
    time.sleep(0.05)
claims.close()
"""


def _run_all(code: str, url: str, n: int) -> list[object]:
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, url, str(n)], stdout=subprocess.PIPE, text=True
        )
        for _ in range(n)
    ]
    outs = [p.communicate(timeout=120)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs)
    return [json.loads(o) for o in outs]


def test_three_processes_take_whole_disjoint_groups(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'study.db'}"
    groups = [g for got in _run_all(TAKER, url, 3) for g in got]  # type: ignore[attr-defined]
    assert len(groups) == 3 and all(len(g) == 4 for g in groups), groups
    for g in groups:  # each group is named by its first slot
        assert {grp for _, grp in g} == {g[0][0]}
    assert sorted(i for g in groups for i, _ in g) == list(range(12))


def test_a_dead_owners_group_is_adopted_whole_by_one_process(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'study.db'}"
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    claims = Claims(url, "s")
    group = claims.take_group(6, 4)
    assert [(s.index, s.group) for s in group] == [(0, 0), (1, 0), (2, 0), (3, 0)]
    for s in group:
        claims.set_trial(s.index, 10 + s.index)
    claims.finish(1)  # told before the kill (e.g. pruned)
    # Hand the group to a process that has exited (as a SIGKILLed sweep leaves it).
    with claims.engine.begin() as c:
        c.execute(
            claims.table.update().values(owner=f"{socket.gethostname()}:{dead.stdout.strip()}:-")
        )
    claims.close()
    got = _run_all(ADOPTER, url, 3)
    whole = [[i, 10 + i, 0, i == 1] for i in range(4)]
    assert sorted(got, key=str) == sorted([[], [], whole], key=str), got
    # Adopted again by nobody while its new owner is alive (this test process, here).
    from pipekit_train.sweep._claims import owner_id

    live = Claims(url, "s")
    with live.engine.begin() as c:
        c.execute(live.table.update().values(owner=owner_id()))
    live.close()
    assert _run_all(ADOPTER, url, 2) == [[], []]
