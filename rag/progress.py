"""A one-line progress bar on a terminal; silent when output is not a terminal."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class ProgressBar:
    def __init__(self, label: str, *, stream: TextIO = sys.stderr, width: int = 30) -> None:
        self._label = label
        self._stream = stream
        self._width = width
        self._enabled = stream.isatty()
        self._started = time.perf_counter()
        self._drawn = False

    def update(self, done: int, total: int) -> None:
        if not self._enabled or total == 0:
            return
        filled = round(self._width * done / total)
        elapsed = time.perf_counter() - self._started
        bar = "#" * filled + "-" * (self._width - filled)
        self._stream.write(f"\r{self._label} [{bar}] {done}/{total} files {elapsed:5.1f}s")
        self._stream.flush()
        self._drawn = True

    def close(self) -> None:
        if self._drawn:
            self._stream.write("\n")
            self._stream.flush()
