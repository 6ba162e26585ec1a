"""The Teams app icons, drawn in code: a 192×192 colour icon and a 32×32 white outline on
transparency, as PNG (written with zlib; no imaging library needed)."""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable

Pixel = tuple[int, int, int, int]
ACCENT: Pixel = (0x2E, 0x3B, 0x4E, 255)
WHITE: Pixel = (255, 255, 255, 255)
CLEAR: Pixel = (0, 0, 0, 0)


def png(width: int, height: int, pixel: Callable[[int, int], Pixel]) -> bytes:
    """An RGBA PNG whose pixel (x, y) is ``pixel(x, y)``."""
    rows = b"".join(
        b"\x00" + b"".join(bytes(pixel(x, y)) for x in range(width)) for y in range(height)
    )

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows, 9))
        + chunk(b"IEND", b"")
    )


def _book(x: float, y: float) -> bool:
    """An open book (two pages and a spine) in the unit square: the runbook mark."""
    if not 0.22 <= y <= 0.78:
        return False
    left, right = 0.16 <= x <= 0.47, 0.53 <= x <= 0.84
    lines = any(abs(y - row) < 0.025 for row in (0.36, 0.48, 0.60)) and (
        0.22 <= x <= 0.42 or 0.58 <= x <= 0.78
    )
    edge = (
        abs(y - 0.22) < 0.03 or abs(y - 0.78) < 0.03 or abs(x - 0.16) < 0.03 or abs(x - 0.84) < 0.03
    )
    return (left or right) and (lines or edge or abs(x - 0.5) < 0.03)


def color_icon() -> bytes:
    """192×192, the accent colour with the mark in white (Teams' full-colour icon)."""
    return png(192, 192, lambda x, y: WHITE if _book(x / 191, y / 191) else ACCENT)


def outline_icon() -> bytes:
    """32×32, white mark on transparency (Teams' outline icon)."""
    return png(32, 32, lambda x, y: WHITE if _book(x / 31, y / 31) else CLEAR)
