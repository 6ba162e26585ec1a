"""``runbook serve --role all``: one web process and ``RUNBOOK_WORKERS`` worker processes, kept
running.

Each is ``runbook serve --role web|worker --slot N`` in a process of its own (its own event
loop, its own GIL): an ack never waits behind answer work, and the workers run at a lower
priority (``RUNBOOK_WORKER_NICE``). The web process starts once the workers answer their
``/healthz`` (the model is loaded), so the first requests are answered at once. A child that
exits on its own is started again in its slot, at once, then after a growing pause if it keeps
failing within seconds (a configuration error, exit 2, stops everything instead). A dead
worker's jobs go back in line the moment the supervisor sees it go, not when their leases run
out. SIGTERM (or SIGINT) goes to every child, which drain as ``runbook serve`` always has;
whatever is still running after the drain is killed. A child whose supervisor dies gets SIGTERM
from the kernel (``follow_parent``) and drains as well.

Internal ports: the web process's is ``RUNBOOK_INTERNAL_PORT``, worker N's the next ones
(9091, 9092, … by default), each with its own ``/healthz`` and ``/metrics``.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import os
import signal
import socket
import sys
import time
from dataclasses import dataclass, field

import aiohttp
import psycopg

from bot.core.jobs.queue import release_jobs_of
from rag import Settings, Store, StoreError, open_store

logger = logging.getLogger(__name__)

EXIT_USAGE = 2
_QUICK_EXIT_S = 30.0  # a child that dies sooner than this is restarted after a growing pause
_FIRST_PAUSE_S = 0.5
_MAX_PAUSE_S = 30.0
_KILL_AFTER_DRAIN_S = 10.0
_WORKERS_READY_S = 120.0
_PR_SET_PDEATHSIG = 1
_SUPERVISOR_PID = "RUNBOOK_SUPERVISOR_PID"  # read by follow_parent in the child


@dataclass
class Child:
    role: str
    slot: int
    argv: list[str]
    env: dict[str, str]
    process: asyncio.subprocess.Process | None = None
    started_at: float = 0.0
    pause_s: float = 0.0
    restarts: int = 0
    waiter: asyncio.Task[int] | None = field(default=None, repr=False)

    async def start(self) -> None:
        self.process = await asyncio.create_subprocess_exec(
            *self.argv, env=self.env, stdin=asyncio.subprocess.DEVNULL
        )
        self.started_at = time.monotonic()
        self.waiter = asyncio.create_task(self.process.wait(), name=f"{self.role}-{self.slot}")
        logger.info("started %s %d (pid %d)", self.role, self.slot, self.process.pid)

    def signal(self, sig: int) -> None:
        if self.process is not None and self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.send_signal(sig)

    def next_pause(self) -> float:
        """Restart at once after a long life; after a quick death, wait longer each time."""
        if time.monotonic() - self.started_at >= _QUICK_EXIT_S:
            self.pause_s = 0.0
        else:
            self.pause_s = min(max(self.pause_s * 2, _FIRST_PAUSE_S), _MAX_PAUSE_S)
        return self.pause_s


def children_for(settings: Settings) -> list[Child]:
    """The web process and the workers, each with its command line and internal port."""
    verbose = ["-v"] if logging.getLogger().isEnabledFor(logging.INFO) else []
    base = [sys.executable, "-m", "bot", *verbose, "serve", "--host", settings.host]
    base += ["--port", str(settings.port)]
    port = settings.internal_port
    children = [_child("web", 0, base, port)]
    for slot in range(settings.worker_processes):
        children.append(_child("worker", slot, base, port + 1 + slot if port else 0))
    return children


def _child(role: str, slot: int, base: list[str], internal_port: int) -> Child:
    env = {
        **os.environ,
        "RUNBOOK_INTERNAL_PORT": str(internal_port),
        _SUPERVISOR_PID: str(os.getpid()),
    }
    return Child(role, slot, [*base, "--role", role, "--slot", str(slot)], env)


def worker_name(supervisor_pid: int, slot: int) -> str:
    """A supervised worker's name on the jobs it claims: the same for every process in its
    slot, so the jobs of one that died can be put back at once."""
    return f"{socket.gethostname()}-{supervisor_pid}-w{slot}"


async def supervise(settings: Settings) -> int:
    """Run the children until SIGTERM/SIGINT; returns the exit code."""
    # The database up (an embedded one started) and migrated once, before the children race.
    async with open_store(settings) as store:
        return await _supervise(settings, store)


async def _supervise(settings: Settings, store: Store) -> int:
    children = children_for(settings)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        web, workers = children[0], children[1:]
        for child in workers:
            await child.start()
        # Public traffic once the workers can answer it (a deploy's old replicas serve until
        # then); a worker that takes too long does not keep the acks waiting any longer.
        ready = asyncio.create_task(_until_healthy(workers, settings.internal_host))
        stopping = asyncio.create_task(stop.wait())
        await asyncio.wait(
            {ready, stopping}, timeout=_WORKERS_READY_S, return_when=asyncio.FIRST_COMPLETED
        )
        ready.cancel()
        stopping.cancel()
        if stop.is_set():
            return 0
        await web.start()
        logger.info("serving: 1 web process, %d workers", len(workers))
        code = await _keep_running(children, stop, store)
    finally:
        # Still handled (a repeat only sets ``stop`` again) while the children drain.
        await _stop_all(children, settings.drain_timeout_s + _KILL_AFTER_DRAIN_S)
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
    return code


async def _keep_running(children: list[Child], stop: asyncio.Event, store: Store) -> int:
    stopping = asyncio.create_task(stop.wait())
    restarts: set[asyncio.Task[None]] = set()
    try:
        while True:
            waiters = {c.waiter: c for c in children if c.waiter is not None}
            done, _ = await asyncio.wait({stopping, *waiters}, return_when=asyncio.FIRST_COMPLETED)
            if stopping in done:
                return 0
            for task in done:
                child = waiters[task]
                code = task.result()
                child.waiter = None
                if code == EXIT_USAGE:
                    logger.error("%s %d: configuration error; stopping", child.role, child.slot)
                    return EXIT_USAGE
                if child.role == "worker":
                    await _release(store, worker_name(os.getpid(), child.slot))
                pause = child.next_pause()
                logger.warning(
                    "%s %d (pid %s) exited with %s; restarting in %.1f s",
                    child.role,
                    child.slot,
                    child.process.pid if child.process else "?",
                    code,
                    pause,
                )
                restart = asyncio.create_task(_restart(child, pause))
                restarts.add(restart)
                restart.add_done_callback(restarts.discard)
            if not any(c.waiter for c in children):
                await asyncio.wait({stopping, *restarts}, return_when=asyncio.FIRST_COMPLETED)
                if stopping.done():
                    return 0
    finally:
        stopping.cancel()
        for restart in restarts:
            restart.cancel()


async def _until_healthy(workers: list[Child], host: str) -> None:
    """Until every worker's internal ``/healthz`` says 200 (they have loaded the model)."""
    host = "127.0.0.1" if host in ("0.0.0.0", "", "::") else host
    ports = [int(child.env["RUNBOOK_INTERNAL_PORT"]) for child in workers]
    if 0 in ports:
        return  # ports the kernel picks: nothing to ask
    timeout = aiohttp.ClientTimeout(total=1)
    async with aiohttp.ClientSession(timeout=timeout) as session:
        for port in ports:
            while True:
                try:
                    async with session.get(f"http://{host}:{port}/healthz") as resp:
                        if resp.status == 200:
                            break
                except (aiohttp.ClientError, TimeoutError):
                    pass
                await asyncio.sleep(0.2)


async def _release(store: Store, name: str) -> None:
    """A dead worker's jobs back in line now, not when their leases run out."""
    try:
        if released := await release_jobs_of(store, name):
            logger.warning("put back %d jobs of worker %s", released, name)
    except (psycopg.Error, StoreError, TimeoutError) as exc:  # their leases run out instead
        logger.warning("jobs of worker %s not put back: %s", name, type(exc).__name__)


async def _restart(child: Child, pause: float) -> None:
    await asyncio.sleep(pause)
    child.restarts += 1
    await child.start()


async def _stop_all(children: list[Child], within_s: float) -> None:
    """SIGTERM each child (they drain), then SIGKILL whatever outlives ``within_s``."""
    running = [c for c in children if c.process is not None and c.process.returncode is None]
    for child in running:
        child.signal(signal.SIGTERM)
    waits = [c.process.wait() for c in running if c.process is not None]
    if not waits:
        return
    try:
        await asyncio.wait_for(asyncio.gather(*waits), within_s)
    except TimeoutError:
        for child in running:
            child.signal(signal.SIGKILL)
        await asyncio.gather(*(c.process.wait() for c in running if c.process is not None))


def follow_parent() -> None:
    """In a child: SIGTERM when the supervisor dies (Linux; elsewhere a no-op), so an orphan
    drains and exits instead of running on unsupervised."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    supervisor = os.environ.get(_SUPERVISOR_PID)
    if supervisor is not None and str(os.getppid()) != supervisor:
        os.kill(os.getpid(), signal.SIGTERM)  # it was gone before the request took effect
