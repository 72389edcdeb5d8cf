"""Slots of the trial budget, claimed atomically in the study's own database.

The budget of ``n_trials`` is ``n_trials`` slots, rows of a small table
(``pipekit_sweep_slots``) beside Optuna's tables in the same storage. A process
takes a free slot with an ``INSERT`` (the primary key makes two takers of one slot
impossible), records the trial it made for it, beats a heartbeat while the trial
runs, and marks the slot done after telling Optuna the result. A slot whose owner
is dead — same host and its process gone, or a heartbeat older than the grace
period — is adopted with a compare-and-set ``UPDATE … WHERE owner = <old owner>``:
only one process wins it, and that process re-runs the SAME trial (same params,
same run folder, resuming its checkpoint). Counting the budget from these rows, not
from a process's memory, is what lets several processes (or machines) share one
study without running a trial twice or overrunning the budget.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any

__all__ = ["Slot", "Claims", "owner_id"]

TABLE = "pipekit_sweep_slots"


def _start_time(pid: int) -> str | None:
    """The start time of process ``pid`` (Linux ``/proc``), telling a reused pid apart."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            return f.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def owner_id() -> str:
    """``host:pid:start`` of this process."""
    return f"{socket.gethostname()}:{os.getpid()}:{_start_time(os.getpid()) or '-'}"


def _owner_is_dead(owner: str) -> bool:
    """Whether ``owner`` (``host:pid:start``) is a process of this host that no longer runs."""
    host, _, rest = owner.partition(":")
    pid_text, _, start = rest.partition(":")
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    pid = int(pid_text)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    now = _start_time(pid)
    return start != "-" and now is not None and now != start


@dataclass(frozen=True)
class Slot:
    """One claimed slot: its index, the trial number made for it (``None``: not yet), its
    population group (``None``: a trial of its own) and whether it is done."""

    index: int
    trial_number: int | None
    group: int | None = None
    done: bool = False


class _LostRace(Exception):
    """Another process adopted part of a group first (rolls the transaction back)."""


class Claims:
    """The slot table of one study in the database at ``url``."""

    def __init__(self, url: str, study_name: str, *, grace_s: float = 600.0) -> None:
        import sqlalchemy as sa

        from ._optuna import engine_kwargs

        self.sa = sa
        self.study, self.owner, self.grace_s = study_name, owner_id(), grace_s
        self.engine = sa.create_engine(url, **engine_kwargs(url))
        meta = sa.MetaData()
        self.table = sa.Table(
            TABLE,
            meta,
            sa.Column("study", sa.String(255), primary_key=True),
            sa.Column("slot", sa.Integer, primary_key=True),
            sa.Column("owner", sa.String(255), nullable=False),
            sa.Column("heartbeat", sa.Float, nullable=False),
            sa.Column("trial_number", sa.Integer, nullable=True),
            sa.Column("grp", sa.Integer, nullable=True),
            sa.Column("done", sa.Boolean, nullable=False, default=False),
        )
        for attempt in range(5):  # two processes creating the table at once
            try:
                meta.create_all(self.engine, checkfirst=True)
                break
            except sa.exc.OperationalError:
                if attempt == 4:
                    raise
                time.sleep(0.5)
        self._mine: set[int] = set()
        self._stop = threading.Event()
        self._beat = threading.Thread(target=self._beat_loop, daemon=True)
        self._beat.start()

    # -- reading ---------------------------------------------------------------------------
    def rows(self) -> list[dict[str, Any]]:
        t = self.table
        with self.engine.connect() as c:
            found = c.execute(self.sa.select(t).where(t.c.study == self.study)).mappings()
            return [dict(r) for r in found]

    # -- claiming --------------------------------------------------------------------------
    def take_free(self, n_slots: int, group: int | None = None) -> Slot | None:
        """The lowest free slot below ``n_slots``, now this process's; ``None`` when all taken."""
        taken = {r["slot"] for r in self.rows()}
        for index in range(n_slots):
            if index in taken:
                continue
            try:
                with self.engine.begin() as c:
                    c.execute(
                        self.table.insert().values(
                            study=self.study,
                            slot=index,
                            owner=self.owner,
                            heartbeat=time.time(),
                            trial_number=None,
                            grp=group,
                            done=False,
                        )
                    )
            except self.sa.exc.IntegrityError:
                continue
            self._mine.add(index)
            return Slot(index, None, group)
        return None

    def take_group(self, n_slots: int, size: int) -> list[Slot]:
        """The lowest ``size`` free slots below ``n_slots`` (fewer where fewer are left), now
        this process's as ONE population group named by its first slot: inserted in one
        transaction, so a group is in the table whole or not at all (a process killed while
        taking it leaves no part of a population); ``[]`` when all are taken."""
        while True:
            taken = {r["slot"] for r in self.rows()}
            free = [i for i in range(n_slots) if i not in taken][:size]
            if not free:
                return []
            now = time.time()
            try:
                with self.engine.begin() as c:
                    c.execute(
                        self.table.insert(),
                        [
                            {
                                "study": self.study,
                                "slot": i,
                                "owner": self.owner,
                                "heartbeat": now,
                                "trial_number": None,
                                "grp": free[0],
                                "done": False,
                            }
                            for i in free
                        ],
                    )
            except self.sa.exc.IntegrityError:
                continue  # another process took one of them: look again
            self._mine.update(free)
            return [Slot(i, None, free[0]) for i in free]

    def adopt(self) -> list[Slot]:
        """The lowest unfinished slot whose owner is dead, now this process's, or ``[]``.

        A slot of a population group is adopted with its WHOLE group, done members
        included (in slot order, each with its ``done``), in one compare-and-set
        transaction: the population resumed is the one its checkpoint holds, never the
        members left unfinished, and no two processes split one group.
        """
        rows = sorted(self.rows(), key=lambda r: r["slot"])
        now = time.time()

        def stale(r: dict[str, Any]) -> bool:
            return r["owner"] != self.owner and (
                _owner_is_dead(r["owner"]) or now - r["heartbeat"] > self.grace_s
            )

        for r in rows:
            if r["done"] or not stale(r):
                continue
            if r["grp"] is None:
                slot = self._take_over(r)
                if slot is not None:
                    return [slot]
                continue
            members = [m for m in rows if m["grp"] == r["grp"]]
            if any(not m["done"] and not stale(m) for m in members):
                continue  # part of the group is alive: not adoptable
            t, owners = self.table, {m["owner"] for m in members if m["owner"] != self.owner}
            try:
                with self.engine.begin() as c:
                    won = 0
                    for owner in sorted(owners):
                        won += c.execute(
                            t.update()
                            .where(t.c.study == self.study, t.c.grp == r["grp"], t.c.owner == owner)
                            .values(owner=self.owner, heartbeat=time.time())
                        ).rowcount
                    if won != sum(m["owner"] != self.owner for m in members):
                        raise _LostRace
            except _LostRace:
                continue
            self._mine.update(m["slot"] for m in members if not m["done"])
            return [Slot(m["slot"], m["trial_number"], m["grp"], bool(m["done"])) for m in members]
        return []

    def adopt_stale(self, group: int | None = None) -> Slot | None:
        """An unfinished slot whose owner is dead, now this process's (compare-and-set).

        ``group``: only a slot of that population group (its other members).
        """
        now = time.time()
        for r in sorted(self.rows(), key=lambda r: r["slot"]):
            if r["done"] or r["owner"] == self.owner:
                continue
            if group is not None and r["grp"] != group:
                continue
            if not (_owner_is_dead(r["owner"]) or now - r["heartbeat"] > self.grace_s):
                continue
            slot = self._take_over(r)
            if slot is not None:
                return slot
        return None

    def _take_over(self, r: dict[str, Any]) -> Slot | None:
        """Row ``r`` now this process's, if its owner is still the one read (compare-and-set)."""
        t = self.table
        with self.engine.begin() as c:
            won = c.execute(
                t.update()
                .where(
                    t.c.study == self.study,
                    t.c.slot == r["slot"],
                    t.c.owner == r["owner"],
                    t.c.done.is_(False),
                )
                .values(owner=self.owner, heartbeat=time.time())
            ).rowcount
        if won != 1:
            return None
        self._mine.add(r["slot"])
        return Slot(r["slot"], r["trial_number"], r["grp"])

    def _update(self, index: int, **values: Any) -> None:
        t = self.table
        with self.engine.begin() as c:
            c.execute(
                t.update()
                .where(t.c.study == self.study, t.c.slot == index, t.c.owner == self.owner)
                .values(**values)
            )

    def set_trial(self, index: int, number: int) -> None:
        self._update(index, trial_number=number)

    def set_group(self, index: int, group: int) -> None:
        self._update(index, grp=group)

    def finish(self, index: int) -> None:
        self._update(index, done=True)
        self._mine.discard(index)

    # -- heartbeat -------------------------------------------------------------------------
    def _beat_loop(self) -> None:
        while not self._stop.wait(max(1.0, self.grace_s / 4)):
            for index in list(self._mine):
                try:
                    self._update(index, heartbeat=time.time())
                except Exception:  # a busy database: the next beat tries again
                    pass

    def close(self) -> None:
        self._stop.set()
        self.engine.dispose()
