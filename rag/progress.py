"""Progress of long work (ingest, source sync): a tqdm bar on a terminal, plain lines otherwise.

``ProgressBar.update(done, total)`` is the hook: pass it as ``on_progress`` to ``ingest_path``
(counts are chunks to embed) or call it from any loop that knows its done and total.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from types import TracebackType
from typing import Never, TextIO

from tqdm import tqdm

# Without a terminal (a log file, a container's stdout) a line this often, and at the end.
PLAIN_INTERVAL_S = 10.0


class ProgressBar:
    """Shows ``done``/``total`` units with their rate and the time left; a no-op at ``total`` 0."""

    def __init__(
        self,
        label: str,
        *,
        unit: str = "chunk",
        stream: TextIO | None = None,
        interval_s: float = PLAIN_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._label = label
        self._unit = unit
        # Looked up per bar, not at import: tests and tools swap sys.stderr.
        self._stream = stream if stream is not None else sys.stderr
        self._interval_s = interval_s
        self._clock = clock
        self._terminal = self._stream.isatty()
        # tqdm's type parameter is what it iterates; a bar updated by hand iterates nothing.
        self._bar: tqdm[Never] | None = None
        self._started: float | None = None
        self._last_line: float | None = None
        self._last_done = -1

    def update(self, done: int, total: int) -> None:
        if total == 0:
            return
        if self._terminal:
            self._draw(done, total)
        else:
            self._print(done, total)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def _draw(self, done: int, total: int) -> None:
        bar = self._bar
        if bar is None:
            bar = self._bar = tqdm(
                total=total,
                desc=self._label,
                unit=self._unit,
                file=self._stream,
                dynamic_ncols=True,
                smoothing=0.1,
            )
        bar.total = total
        bar.update(done - bar.n)

    def _print(self, done: int, total: int) -> None:
        now = self._clock()
        if self._started is None:
            # The rate counts from the first report: work before it (scanning) is not embedding.
            self._started = now
        due = self._last_line is None or now - self._last_line >= self._interval_s
        if done == self._last_done or not (due or done >= total):
            return
        self._last_line, self._last_done = now, done
        elapsed = now - self._started
        rate = done / elapsed if elapsed > 0 else 0.0
        left = f", {(total - done) / rate:.0f} s left" if 0 < rate and done < total else ""
        self._stream.write(
            f"{self._label}: {done}/{total} {self._unit}s, {rate:.1f} {self._unit}s/s{left}\n"
        )
        self._stream.flush()
