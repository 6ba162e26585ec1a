"""``BackgroundTasks``: strong references to in-flight listener work, drained on shutdown.

Bolt runs every listener in a bare ``asyncio.ensure_future`` and keeps no reference to it: an
unreferenced task can be garbage-collected mid-answer, and a shutdown would cut it off. Each
listener adopts its own task here first thing, and the job worker adopts every job it runs, so
shutdown can wait for answers in flight. A job cancelled at the end of the drain goes back to
the queue (``bot.core.jobs.worker``), so it is answered later rather than lost.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

logger = logging.getLogger(__name__)


class BackgroundTasks:
    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()

    def adopt_current(self) -> None:
        """Hold the running task until it finishes (call from inside a listener)."""
        task = asyncio.current_task()
        if task is not None:
            self.adopt(task)

    def adopt(self, task: asyncio.Task[Any]) -> None:
        """Hold ``task`` until it finishes (a job the worker started, for instance)."""
        if task not in self._tasks:
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    @property
    def pending(self) -> int:
        return len(self._tasks)

    async def drain(self, timeout_s: float) -> int:
        """Wait up to ``timeout_s`` seconds for every task, including ones adopted meanwhile.

        Returns how many were still running and got cancelled (0 on a clean drain).
        """
        deadline = time.monotonic() + timeout_s
        current = asyncio.current_task()
        while True:
            waiting = {task for task in self._tasks if task is not current}
            remaining = deadline - time.monotonic()
            if not waiting or remaining <= 0:
                break
            await asyncio.wait(waiting, timeout=remaining)
        leftover = [task for task in self._tasks if task is not current and not task.done()]
        for task in leftover:
            task.cancel()
        if leftover:
            logger.warning("cancelled %d answer tasks still running at shutdown", len(leftover))
            await asyncio.wait(leftover, timeout=1.0)
        return len(leftover)
