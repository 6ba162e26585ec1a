"""CPU seconds spent by the app's threads and by the database server, read from /proc (Linux).

Wall-clock figures on a shared 2-core machine swing with whatever else runs; CPU seconds per
answer barely do, and say what a replica could do alone: 2 cores ÷ (app + Postgres CPU per
answer) is its ceiling in answers/s, and 1 ÷ the event loop thread's CPU per answer is the
ceiling of the one thread that runs every answer's Python.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

_TICKS_PER_S = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


@dataclass(frozen=True)
class CpuSample:
    """Cumulative CPU seconds (user + system) at one moment."""

    event_loop: float  # the app's main thread: asyncio, Bolt, the answer pipeline's Python
    other_threads: float  # the app's other threads: ONNX Runtime, thread pools
    database: float  # the Postgres server and its backends

    def per_answer_ms(self, before: CpuSample, answers: int) -> dict[str, float | None]:
        """CPU milliseconds per answer since ``before``, and the ceilings they imply."""
        if answers <= 0:
            return {"event_loop": None, "other_threads": None, "database": None}
        loop = (self.event_loop - before.event_loop) * 1000 / answers
        others = (self.other_threads - before.other_threads) * 1000 / answers
        database = (self.database - before.database) * 1000 / answers
        total = loop + others + database
        return {
            "event_loop": round(loop, 1),
            "other_threads": round(others, 1),
            "database": round(database, 1),
            "total": round(total, 1),
            "ceiling_answers_per_s_2_cores": round(2000 / total, 1) if total else None,
            "ceiling_answers_per_s_event_loop": round(1000 / loop, 1) if loop else None,
        }


def sample(app_pid: int, postmaster_pid: int | None) -> CpuSample | None:
    """CPU seconds so far of ``app_pid``'s threads and of the server rooted at
    ``postmaster_pid`` (None where /proc is missing)."""
    if not Path(f"/proc/{app_pid}/task").is_dir():
        return None
    loop = others = 0.0
    for task in Path(f"/proc/{app_pid}/task").iterdir():
        seconds = _cpu_seconds(task / "stat")
        if task.name == str(app_pid):
            loop += seconds
        else:
            others += seconds
    return CpuSample(loop, others, _server_seconds(postmaster_pid))


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
