"""Whether the machine was quiet enough to measure: the load average before the start, and the CPU
that processes other than the benchmark's own used while it measured.

The benchmark's own processes are its Python process and the Postgres server's process tree
(the postmaster and every descendant). Their CPU time is ``utime + stime + cutime + cstime`` from
``/proc/PID/stat``: a backend that exits during the measurement moves its time into its parent's
``cutime``/``cstime``, so the sum's change over the measurement counts it exactly once. Whatever
else ``/proc/stat`` saw the CPUs busy with is *foreign*, reported as a share of one core.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rag import ConfigurationError

if TYPE_CHECKING:
    from rag import Store

PROC = Path("/proc")
_POLL_SECONDS = 5.0


class BusyMachineError(ConfigurationError):
    """The machine did not become quiet enough to start measuring."""


@dataclass(frozen=True)
class ProcessTimes:
    """One process's line of ``/proc/PID/stat``: its parent and its CPU time in clock ticks."""

    pid: int
    ppid: int
    own_ticks: int  # utime + stime
    reaped_children_ticks: int  # cutime + cstime: children it waited for


@dataclass(frozen=True)
class CpuTimes:
    """The first line of ``/proc/stat``, in clock ticks summed over all CPUs."""

    busy: int  # user, nice, system, irq, softirq (guest time is already inside user/nice)
    steal: int  # time the hypervisor gave to other machines
    total: int  # busy + idle + iowait + steal


@dataclass(frozen=True)
class CpuSample:
    cpu: CpuTimes
    benchmark_ticks: int  # CPU time of the benchmark's own process trees


def parse_cpu_times(proc_stat: str) -> CpuTimes:
    for line in proc_stat.splitlines():
        fields = line.split()
        if fields and fields[0] == "cpu":
            user, nice, system, idle, iowait, irq, softirq, steal = map(int, fields[1:9])
            busy = user + nice + system + irq + softirq
            return CpuTimes(busy=busy, steal=steal, total=busy + idle + iowait + steal)
    raise ValueError("/proc/stat has no aggregate 'cpu' line")


def parse_process_times(pid: int, stat_line: str) -> ProcessTimes:
    # The command name (field 2) is in parentheses and may itself hold spaces and ')'.
    fields = stat_line[stat_line.rindex(")") + 2 :].split()
    # fields[0] is field 3 (state) of proc(5): ppid is field 4, utime..cstime fields 14-17.
    utime, stime, cutime, cstime = map(int, fields[11:15])
    return ProcessTimes(pid, int(fields[1]), utime + stime, cutime + cstime)


def tree_ticks(processes: Iterable[ProcessTimes], roots: Iterable[int]) -> int:
    """CPU ticks of ``roots`` and all their descendants, reaped children included."""
    by_parent: dict[int, list[ProcessTimes]] = {}
    by_pid: dict[int, ProcessTimes] = {}
    for process in processes:
        by_pid[process.pid] = process
        by_parent.setdefault(process.ppid, []).append(process)
    total, seen = 0, set()
    pending = [by_pid[pid] for pid in roots if pid in by_pid]
    while pending:
        process = pending.pop()
        if process.pid in seen:
            continue
        seen.add(process.pid)
        total += process.own_ticks + process.reaped_children_ticks
        pending.extend(by_parent.get(process.pid, ()))
    return total


def read_processes(proc: Path = PROC) -> list[ProcessTimes]:
    found = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            line = (entry / "stat").read_text(encoding="utf-8", errors="replace")
        except OSError:  # the process exited between listing and reading
            continue
        found.append(parse_process_times(int(entry.name), line))
    return found


def sample_cpu(roots: Iterable[int], proc: Path = PROC) -> CpuSample:
    processes = read_processes(proc)
    cpu = parse_cpu_times((proc / "stat").read_text(encoding="utf-8"))
    return CpuSample(cpu=cpu, benchmark_ticks=tree_ticks(processes, roots))


def foreign_cpu(before: CpuSample, after: CpuSample, *, cpus: int) -> dict[str, float]:
    """Busy CPU not spent by the benchmark's processes, as a share of one core's time."""
    core_ticks = (after.cpu.total - before.cpu.total) / cpus
    if core_ticks <= 0:
        raise ValueError("the two CPU samples span no time")
    busy = after.cpu.busy - before.cpu.busy
    ours = after.benchmark_ticks - before.benchmark_ticks
    return {
        "seconds": round(core_ticks / os.sysconf("SC_CLK_TCK"), 1),
        "busy_cores": round(busy / core_ticks, 4),
        "benchmark_cores": round(ours / core_ticks, 4),
        # Clamped: the two readings of a sample are a few microseconds apart.
        "foreign_share_of_one_core": round(max(0.0, (busy - ours) / core_ticks), 4),
        "steal_share_of_one_core": round((after.cpu.steal - before.cpu.steal) / core_ticks, 4),
    }


def refusal_reasons(foreign: Mapping[str, float], *, max_foreign: float) -> list[str]:
    """Why a measurement may not be reported (empty: it may)."""
    share = foreign["foreign_share_of_one_core"]
    if share > max_foreign:
        return [
            f"other processes used {share:.1%} of one core while measuring "
            f"(limit {max_foreign:.1%}): the machine was busy"
        ]
    return []


def postmaster_pid(backend_pid: int, proc: Path = PROC) -> int:
    """The server's postmaster: the parent of one of its backends, which must run here."""
    try:
        line = (proc / str(backend_pid) / "stat").read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigurationError(
            "the busy-machine check needs the Postgres server on this machine (its backend "
            f"pid {backend_pid} is not in {proc}); use the embedded server (RUNBOOK_DATA_DIR)"
        ) from exc
    return parse_process_times(backend_pid, line).ppid


async def benchmark_roots(store: Store) -> list[int]:
    """This process and the server's postmaster: the roots of the benchmark's own CPU time."""
    async with store.pool.connection() as conn:
        cur = await conn.execute("SELECT pg_backend_pid()")
        row = await cur.fetchone()
    assert row is not None
    return [os.getpid(), postmaster_pid(int(row[0]))]


async def wait_until_quiet(*, max_load: float, wait_seconds: float) -> float:
    """The 1-minute load average once it is under ``max_load``, polling for up to
    ``wait_seconds``; ``BusyMachineError`` if it stays at or above it."""
    deadline = time.monotonic() + wait_seconds
    while True:
        load = os.getloadavg()[0]
        if load < max_load:
            return load
        if time.monotonic() >= deadline:
            raise BusyMachineError(
                f"refusing to measure: the 1-minute load average is {load:.2f}, not under "
                f"--max-load {max_load} (after waiting {wait_seconds:.0f} s; --wait-quiet "
                "SECONDS waits longer)"
            )
        await asyncio.sleep(min(_POLL_SECONDS, max(0.0, deadline - time.monotonic())))


@dataclass(frozen=True)
class QuietRules:
    """The options that decide whether a measurement may start and be reported."""

    max_load: float = 0.1
    wait_seconds: float = 0.0
    max_foreign_cpu: float = 0.05


class QuietWatch:
    """Samples the CPU before and after a measurement and judges it (see the module docstring)."""

    def __init__(self, rules: QuietRules, *, roots: Iterable[int]) -> None:
        self.rules = rules
        self.roots = tuple(roots)
        self.load_before: tuple[float, float, float] = (0.0, 0.0, 0.0)
        self._before: CpuSample | None = None

    async def start(self) -> None:
        await wait_until_quiet(max_load=self.rules.max_load, wait_seconds=self.rules.wait_seconds)
        self.load_before = os.getloadavg()
        self._before = await asyncio.to_thread(sample_cpu, self.roots)

    async def verdict(self) -> dict[str, Any]:
        if self._before is None:
            raise RuntimeError("QuietWatch.verdict() before start()")
        after = await asyncio.to_thread(sample_cpu, self.roots)
        foreign = foreign_cpu(self._before, after, cpus=os.cpu_count() or 1)
        reasons = refusal_reasons(foreign, max_foreign=self.rules.max_foreign_cpu)
        return {
            "valid": not reasons,
            "invalid_reasons": reasons,
            "quiet": {
                "max_load": self.rules.max_load,
                "load_average_before_after": [
                    [round(v, 2) for v in load] for load in (self.load_before, os.getloadavg())
                ],
                "max_foreign_share_of_one_core": self.rules.max_foreign_cpu,
                "benchmark_processes": "this Python process and the Postgres server's tree",
                **foreign,
            },
        }
