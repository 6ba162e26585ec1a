"""The busy-machine rule of the scale and peer benchmarks: reading /proc, the benchmark's own
CPU time, the foreign share and the verdict. No timings: /proc texts are written out here."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.quiet import (
    BusyMachineError,
    CpuSample,
    CpuTimes,
    ProcessTimes,
    foreign_cpu,
    parse_cpu_times,
    parse_process_times,
    postmaster_pid,
    read_processes,
    refusal_reasons,
    sample_cpu,
    tree_ticks,
    wait_until_quiet,
)
from rag import ConfigurationError

PROC_STAT = """cpu  1000 50 300 9000 100 10 20 5 7 0
cpu0 500 25 150 4500 50 5 10 2 3 0
cpu1 500 25 150 4500 50 5 10 3 4 0
intr 12345
"""


def _stat_line(pid: int, comm: str, ppid: int, times: tuple[int, int, int, int]) -> str:
    # proc(5): pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
    # utime stime cutime cstime priority nice ...
    utime, stime, cutime, cstime = times
    return (
        f"{pid} ({comm}) S {ppid} {pid} {pid} 0 -1 4194560 100 0 0 0 "
        f"{utime} {stime} {cutime} {cstime} 39 19 1 0 100 0 0\n"
    )


def test_cpu_line_counts_busy_ticks_without_idle_iowait_or_steal() -> None:
    times = parse_cpu_times(PROC_STAT)
    assert times == CpuTimes(busy=1000 + 50 + 300 + 10 + 20, steal=5, total=1380 + 9000 + 100 + 5)


def test_proc_stat_without_an_aggregate_cpu_line_is_rejected() -> None:
    with pytest.raises(ValueError, match="no aggregate 'cpu' line"):
        parse_cpu_times("cpu0 1 2 3 4 5 6 7 8\n")


def test_process_line_with_spaces_and_parentheses_in_its_name_parses() -> None:
    line = _stat_line(4242, "postgres: bench (x) SELECT", 4000, (70, 30, 5, 1))
    assert parse_process_times(4242, line) == ProcessTimes(4242, 4000, 100, 6)


def test_tree_ticks_sum_roots_and_all_descendants_but_no_strangers() -> None:
    processes = [
        ProcessTimes(1, 0, 999, 0),  # init: not ours
        ProcessTimes(10, 1, 5, 0),  # the benchmark's Python process
        ProcessTimes(20, 1, 7, 40),  # the postmaster, with reaped backends' time
        ProcessTimes(21, 20, 100, 0),  # a backend
        ProcessTimes(22, 21, 3, 0),  # a parallel worker under it
        ProcessTimes(30, 1, 500, 0),  # another helper's process
    ]
    assert tree_ticks(processes, [10, 20]) == 5 + 7 + 40 + 100 + 3
    assert tree_ticks(processes, [10, 99]) == 5  # a root that is gone counts nothing


def test_a_backend_exiting_mid_measurement_is_counted_once() -> None:
    # Before: backend 21 had used 100 ticks. It then used 50 more and exited; the postmaster
    # reaped it, so its 150 ticks moved into the postmaster's cutime/cstime.
    before = tree_ticks([ProcessTimes(20, 1, 7, 0), ProcessTimes(21, 20, 100, 0)], [20])
    after = tree_ticks([ProcessTimes(20, 1, 7, 150)], [20])
    assert after - before == 50


def _sample(busy: int, total: int, ours: int, steal: int = 0) -> CpuSample:
    return CpuSample(CpuTimes(busy=busy, steal=steal, total=total), benchmark_ticks=ours)


def test_foreign_share_is_busy_time_minus_the_benchmarks_per_core() -> None:
    # 2 CPUs over 10 s at 100 ticks/s: 2000 ticks in all, 1000 per core.
    found = foreign_cpu(_sample(0, 0, 0), _sample(900, 2000, 800, steal=20), cpus=2)
    assert found["busy_cores"] == 0.9
    assert found["benchmark_cores"] == 0.8
    assert found["foreign_share_of_one_core"] == pytest.approx(0.1)
    assert found["steal_share_of_one_core"] == 0.02


def test_foreign_share_never_goes_negative_from_sampling_skew() -> None:
    found = foreign_cpu(_sample(0, 0, 0), _sample(500, 2000, 510), cpus=2)
    assert found["foreign_share_of_one_core"] == 0.0


def test_samples_spanning_no_time_are_rejected() -> None:
    with pytest.raises(ValueError, match="span no time"):
        foreign_cpu(_sample(5, 100, 0), _sample(5, 100, 0), cpus=2)


def test_result_is_refused_above_the_foreign_cpu_limit_and_kept_at_it() -> None:
    busy = refusal_reasons({"foreign_share_of_one_core": 0.12}, max_foreign=0.05)
    assert len(busy) == 1 and "12.0% of one core" in busy[0] and "limit 5.0%" in busy[0]
    assert refusal_reasons({"foreign_share_of_one_core": 0.05}, max_foreign=0.05) == []


def test_sample_reads_a_proc_tree_from_disk(tmp_path: Path) -> None:
    (tmp_path / "stat").write_text(PROC_STAT, encoding="utf-8")
    for pid, ppid, times in ((10, 1, (4, 1, 0, 0)), (20, 1, (2, 1, 9, 0)), (21, 20, (30, 5, 0, 0))):
        (tmp_path / str(pid)).mkdir()
        line = _stat_line(pid, "postgres", ppid, times)
        (tmp_path / str(pid) / "stat").write_text(line, encoding="utf-8")
    (tmp_path / "self").mkdir()  # not a process directory
    assert {p.pid for p in read_processes(tmp_path)} == {10, 20, 21}
    sample = sample_cpu([20], tmp_path)
    assert sample.benchmark_ticks == 2 + 1 + 9 + 30 + 5
    assert sample.cpu.busy == 1380
    assert postmaster_pid(21, tmp_path) == 20


def test_postmaster_of_a_server_elsewhere_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="Postgres server on this machine"):
        postmaster_pid(12345, tmp_path)


async def test_busy_machine_is_refused_before_measuring_when_not_waiting() -> None:
    with pytest.raises(BusyMachineError, match="refusing to measure"):
        await wait_until_quiet(max_load=-1.0, wait_seconds=0.0)


async def test_quiet_machine_starts_at_once() -> None:
    assert await wait_until_quiet(max_load=float("inf"), wait_seconds=0.0) >= 0.0
