"""The real Slack app as a separate ``runbook serve`` process, for benchmarks and replica tests.

    async with app_process(env=app_env(...), log_path=Path("app.log")) as app:
        sender = SlackSender(app.events_url, secret)
        ...  # app.rss_bytes() / app.peak_rss_bytes() read the child's /proc status

A separate interpreter means sender and app never share an event loop (or a GIL). Started with
the repository's code, stopped with SIGTERM so it drains its answers as a deploy would.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import aiohttp

from bench.process_cpu import process_tree
from bot.slack.routes import EVENTS_PATH

REPO = Path(__file__).resolve().parents[1]
_SERVE = "import sys; from bot.cli import main; sys.exit(main(sys.argv[1:]))"
_STOP_TIMEOUT_S = 30.0  # well past the app's drain (RUNBOOK_DRAIN_TIMEOUT_S) after SIGTERM


@dataclass(frozen=True)
class AppProcess:
    process: asyncio.subprocess.Process
    port: int
    internal_port: int  # /healthz and /metrics

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def internal_url(self) -> str:
        return f"http://127.0.0.1:{self.internal_port}"

    @property
    def events_url(self) -> str:
        return self.base_url + EVENTS_PATH

    def rss_bytes(self) -> int:
        """Resident memory of every process of the app (the supervisor, web and workers)."""
        return sum(_proc_status_kb(pid, "VmRSS") for pid in process_tree(self.pid)) * 1024

    def peak_rss_bytes(self) -> int:
        """The sum of each process's peak: an upper bound of the app's peak."""
        return sum(_proc_status_kb(pid, "VmHWM") for pid in process_tree(self.pid)) * 1024


def free_port() -> int:
    """A port the kernel just handed out on 127.0.0.1 (free unless someone races for it)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def free_port_run(count: int) -> int:
    """The first of ``count`` consecutive free ports: ``--role all`` puts its workers' internal
    ports right after the web process's."""
    for _ in range(50):
        first = free_port()
        if all(_bindable(first + n) for n in range(1, count)):
            return first
    raise RuntimeError(f"no {count} consecutive free ports on 127.0.0.1")


def _bindable(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def app_env(
    *,
    database_url: str,
    data_dir: Path,
    signing_secret: str,
    bot_token: str,
    slack_api_url: str,
    onnx_threads: int = 1,
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The child's environment: the parent's minus any Slack/Claude/database settings, plus ours."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("RUNBOOK_", "SLACK_", "ANTHROPIC_")) and k != "DATABASE_URL"
    }
    env.update(
        {
            "DATABASE_URL": database_url,
            "RUNBOOK_DATA_DIR": str(data_dir),
            "RUNBOOK_ONNX_THREADS": str(onnx_threads),
            "SLACK_SIGNING_SECRET": signing_secret,
            "SLACK_BOT_TOKEN": bot_token,
            "SLACK_API_URL": slack_api_url,
            # `serve --role all` is one web process and this many workers: one per replica
            # (a test's replicas stand for pods) unless ``extra`` says otherwise.
            "RUNBOOK_WORKERS": "1",
            **(extra or {}),
        }
    )
    return env


@asynccontextmanager
async def app_process(
    *,
    env: Mapping[str, str],
    log_path: Path,
    port: int | None = None,
    ready_within_s: float = 90,
    role: str = "all",
) -> AsyncIterator[AppProcess]:
    """Start ``runbook serve --role ROLE`` on 127.0.0.1, wait for its ``/healthz``, SIGTERM it
    on the way out."""
    port = port or free_port()
    internal_port = free_port_run(1 + int(env.get("RUNBOOK_WORKERS", "1")))
    internal = {"RUNBOOK_INTERNAL_HOST": "127.0.0.1", "RUNBOOK_INTERNAL_PORT": str(internal_port)}
    with log_path.open("ab") as log:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            _SERVE,
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--role",
            role,
            env={**env, **internal},
            cwd=REPO,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=log,
            stderr=log,
        )
    app = AppProcess(process, port, internal_port)
    try:
        await _wait_healthy(app, ready_within_s, log_path)
        yield app
    finally:
        await stop_app(app)


async def stop_app(app: AppProcess) -> int | None:
    """SIGTERM, then SIGKILL if it has not drained in time; returns the exit code."""
    process = app.process
    if process.returncode is None:
        process.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(process.wait(), _STOP_TIMEOUT_S)
        except TimeoutError:
            process.kill()
            await process.wait()
    return process.returncode


async def _wait_healthy(app: AppProcess, within_s: float, log_path: Path) -> None:
    deadline = time.monotonic() + within_s
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=2)) as session:
        while time.monotonic() < deadline:
            if app.process.returncode is not None:
                break
            try:
                async with session.get(app.internal_url + "/healthz") as resp:
                    if resp.status == 200:
                        return
            except (aiohttp.ClientError, TimeoutError):
                pass
            await asyncio.sleep(0.2)
    raise RuntimeError(f"runbook serve on port {app.port} never became healthy:\n{_tail(log_path)}")


def _tail(path: Path, chars: int = 2000) -> str:
    return path.read_text(errors="replace")[-chars:]


def _proc_status_kb(pid: int, field: str) -> int:
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:  # it ended while we looked
        return 0
    for line in text.splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0
