"""The sweep's budget slots, in a real SQLite study database: several processes taking
slots at once get each slot exactly once and never more than the budget, and a slot whose
owner died is adopted by exactly one of the processes that see it (a compare-and-set)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from pipekit_train.sweep._claims import Claims

TAKER = """
import json, sys
from pipekit_train.sweep._claims import Claims
claims = Claims(sys.argv[1], "s", grace_s=600)
got = []
while (slot := claims.take_free(12)) is not None:
    got.append(slot.index)
claims.close()
print(json.dumps(got))
"""

# Every adopter stays alive until all have tried: one that adopted and exited would leave its
# own slot to a dead owner again, which a slower adopter would then rightly adopt.
ADOPTER = """
import json, os, pathlib, sys, time
from pipekit_train.sweep._claims import Claims
claims = Claims(sys.argv[1], "s", grace_s=600)
slot = claims.adopt_stale()
print(json.dumps(None if slot is None else [slot.index, slot.trial_number]), flush=True)
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


def test_three_processes_share_twelve_slots_without_overlap(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'study.db'}"
    got = _run_all(TAKER, url, 3)
    flat = sorted(i for g in got for i in g)  # type: ignore[union-attr]
    assert flat == list(range(12))


def test_a_dead_owners_slot_is_adopted_once_with_its_trial(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'study.db'}"
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    claims = Claims(url, "s")
    slot = claims.take_free(3)
    assert slot is not None and slot.index == 0
    claims.set_trial(0, 7)
    # Hand the slot to a process that has exited (as a SIGKILLed sweep leaves it).
    import socket

    with claims.engine.begin() as c:
        c.execute(
            claims.table.update().values(owner=f"{socket.gethostname()}:{dead.stdout.strip()}:-")
        )
    claims.close()
    got = _run_all(ADOPTER, url, 3)
    assert sorted(got, key=str) == sorted([None, None, [0, 7]], key=str)
    # A live owner's slot (this test process's) is never adopted.
    from pipekit_train.sweep._claims import owner_id

    live = Claims(url, "s")
    with live.engine.begin() as c:
        c.execute(live.table.update().values(owner=owner_id()))
    live.close()
    assert _run_all(ADOPTER, url, 2) == [None, None]
