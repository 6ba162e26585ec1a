"""Aim the Slack probe's crash at one process of ``runbook serve --role all``.

The probe (``slack_probe.py --scenario crash``) SIGKILLs the whole process group of its
``--app-cmd`` mid-burst, then starts the command again. Given this wrapper as ``--app-cmd``,
that SIGKILL lands on the wrapper alone; ``serve`` runs in a session of its own, and a watcher
(also outside the group) SIGKILLs the one process named by ``--kill`` at that moment: the web
process, or one worker. ``serve``'s supervisor restarts it, and the probe's restarted command
finds ``serve`` still running and adopts it. SIGTERM to the wrapper (the probe's stop) goes on
to ``serve``, which drains and exits.

    python slack_probe.py --scenario crash --app-url http://127.0.0.1:PORT/slack/events \\
        --app-cmd 'python -m bench.crash_aim --kill worker --state /tmp/aim.json -- \\
                   runbook serve --role all --port PORT'

``--kill all`` leaves the whole of ``serve`` to the probe's SIGKILL instead (run ``serve``
itself as ``--app-cmd`` for that).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from bench.process_cpu import process_tree

_STOP_WAIT_S = 60.0


def role_pids(root: int, role: str) -> list[int]:
    """Processes of ``root``'s tree started with ``--role ROLE``, oldest first."""
    found = []
    for pid in sorted(process_tree(root)):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"--role" in argv[:-1] and argv[argv.index(b"--role") + 1] == role.encode():
            found.append(pid)
    return found


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").is_dir() and "(zombie)" not in _status(pid)


def _status(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return "(zombie)"


def watch(wrapper: int, serve: int, role: str) -> None:
    """The watcher: once ``wrapper`` is gone, SIGKILL ``serve``'s first process of ``role``."""
    while alive(wrapper) and os.getppid() == wrapper:
        time.sleep(0.005)
    for pid in role_pids(serve, role)[:1]:
        os.kill(pid, signal.SIGKILL)
        print(f"crash_aim: SIGKILLed {role} pid {pid}", file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    state = Path(args.state)
    serve = None
    if state.exists():
        pid = int(json.loads(state.read_text())["serve"])
        if alive(pid):
            serve = pid  # the probe restarted us after a kill: serve lives on
    if serve is None:
        started = subprocess.Popen(args.command, start_new_session=True)
        serve = started.pid
        state.write_text(json.dumps({"serve": serve}))
    watcher = subprocess.Popen(
        [sys.executable, "-m", "bench.crash_aim", "--watch", str(serve), "--kill", args.kill],
        start_new_session=True,
    )
    stop = False

    def on_term(signum: int, frame: object) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    while not stop and alive(serve):
        time.sleep(0.1)
    watcher.kill()  # disarmed: this is a stop, not a crash
    if alive(serve):
        # serve leads its own process group: SIGTERM reaches it and its children, as a
        # container stop would; whatever has not drained in time is killed.
        _signal_group(serve, signal.SIGTERM)
        deadline = time.monotonic() + _STOP_WAIT_S
        while alive(serve) and time.monotonic() < deadline:
            time.sleep(0.1)
        if alive(serve):
            print("crash_aim: serve did not stop in time; SIGKILL", file=sys.stderr, flush=True)
            _signal_group(serve, signal.SIGKILL)
    state.unlink(missing_ok=True)
    return 0


def _signal_group(leader: int, sig: int) -> None:
    try:
        os.killpg(leader, sig)
    except ProcessLookupError:
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kill", choices=("web", "worker", "all"), required=True)
    parser.add_argument("--state", default="/tmp/crash_aim.json", help="where serve's pid is kept")
    parser.add_argument("--watch", type=int, help=argparse.SUPPRESS)
    parser.add_argument("command", nargs="*", help="the serve command, after --")
    args = parser.parse_args()
    if args.watch is not None:
        if args.kill != "all":
            watch(os.getppid(), args.watch, args.kill)
        return
    if not args.command:
        parser.error("give the serve command after --")
    sys.exit(run(args))


if __name__ == "__main__":
    main()
