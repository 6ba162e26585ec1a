"""Keep ONNX Runtime's freed buffers from piling up in the C heap (glibc only).

glibc serves large allocations with mmap, but raises that threshold each time such a block is
freed, so later batch buffers come from the heap instead; buffers of ever-different shapes
(length-sorted batches) then fragment it and the process keeps ~1 GB it no longer uses. A fixed
threshold turns the adjustment off: a batch's buffers go back to the system when freed.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging

logger = logging.getLogger(__name__)

# mallopt's parameter number for M_MMAP_THRESHOLD (malloc.h), and the value glibc starts with.
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD_BYTES = 128 * 1024


def fix_mmap_threshold(threshold: int = MMAP_THRESHOLD_BYTES) -> bool:
    """Pin glibc's mmap threshold for this process; False where there is no glibc (musl, macOS)."""
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    libc = ctypes.CDLL(name)
    mallopt = getattr(libc, "mallopt", None)
    if mallopt is None:
        return False
    done = bool(mallopt(_M_MMAP_THRESHOLD, threshold))
    if not done:
        logger.info("mallopt(M_MMAP_THRESHOLD) refused; embedding memory may grow with use")
    return done
