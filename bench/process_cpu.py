"""CPU seconds spent by the app's processes and threads and by the database server, read from
/proc (Linux).

Wall-clock figures on a shared 2-core machine swing with whatever else runs; CPU seconds per
answer barely do, and say what a replica could do alone: 2 cores ÷ (app + Postgres CPU per
answer) is its ceiling in answers/s. The app is every process of ``runbook serve``: with
``--role all`` the supervisor, its web process and its workers, each counted by role; the
event loop is the main thread of each, the other threads are ONNX Runtime and thread pools.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

_TICKS_PER_S = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


@dataclass(frozen=True)
class CpuSample:
    """Cumulative CPU seconds (user + system) at one moment."""

    event_loop: float  # the app's main threads: asyncio, Bolt, the answer pipeline's Python
    other_threads: float  # the app's other threads: ONNX Runtime, thread pools
    database: float  # the Postgres server and its backends
    by_role: tuple[tuple[str, float], ...] = ()  # the app's processes: (role, CPU seconds)

    def per_answer_ms(
        self, before: CpuSample, answers: int
    ) -> dict[str, float | dict[str, float] | None]:
        """CPU milliseconds per answer since ``before``, and the ceilings they imply."""
        if answers <= 0:
            return {"event_loop": None, "other_threads": None, "database": None}
        loop = (self.event_loop - before.event_loop) * 1000 / answers
        others = (self.other_threads - before.other_threads) * 1000 / answers
        database = (self.database - before.database) * 1000 / answers
        total = loop + others + database
        earlier = dict(before.by_role)
        return {
            "event_loop": round(loop, 1),
            "other_threads": round(others, 1),
            "database": round(database, 1),
            "total": round(total, 1),
            "app_by_role": {
                role: round((seconds - earlier.get(role, 0.0)) * 1000 / answers, 1)
                for role, seconds in self.by_role
            },
            "ceiling_answers_per_s_2_cores": round(2000 / total, 1) if total else None,
        }


def sample(app_pid: int, postmaster_pid: int | None) -> CpuSample | None:
    """CPU seconds so far of ``app_pid``'s process tree and of the server rooted at
    ``postmaster_pid`` (None where /proc is missing)."""
    if not Path(f"/proc/{app_pid}/task").is_dir():
        return None
    loop = others = 0.0
    by_role: dict[str, float] = {}
    for pid in process_tree(app_pid):
        mine = 0.0
        for task in Path(f"/proc/{pid}/task").iterdir():
            seconds = _cpu_seconds(task / "stat")
            mine += seconds
            if task.name == str(pid):
                loop += seconds
            else:
                others += seconds
        role = _role(pid)
        by_role[role] = by_role.get(role, 0.0) + mine
    return CpuSample(loop, others, _server_seconds(postmaster_pid), tuple(sorted(by_role.items())))


def process_tree(root: int) -> list[int]:
    """``root`` and its descendants."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int(_stat_fields(entry / "stat")[1])
            except (OSError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def _role(pid: int) -> str:
    """``web`` / ``worker`` from a process's ``--role``; the supervisor (or a one-process
    server) is ``serve``."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return "serve"
    if b"--role" in argv[:-1]:
        role = argv[argv.index(b"--role") + 1].decode()
        return "serve" if role == "all" else role
    return "serve"


def postmaster_pid(pgdata: Path) -> int | None:
    """The server's pid from ``postmaster.pid`` (its first line)."""
    try:
        return int((pgdata / "postmaster.pid").read_text().split("\n", 1)[0])
    except (OSError, ValueError):
        return None


def _server_seconds(postmaster: int | None) -> float:
    if postmaster is None:
        return 0.0
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = _stat_fields(entry / "stat")
        except OSError:  # the process ended while we looked
            continue
        if entry.name == str(postmaster) or fields[1] == str(postmaster):
            total += (int(fields[11]) + int(fields[12])) / _TICKS_PER_S
    return total


def _cpu_seconds(stat: Path) -> float:
    try:
        fields = _stat_fields(stat)
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / _TICKS_PER_S


def _stat_fields(stat: Path) -> list[str]:
    """The fields after the command name (which may hold spaces): state, ppid, … utime, stime."""
    text = stat.read_text()
    return text[text.rindex(")") + 2 :].split()
