"""The cyclic garbage collector paused while the codemod works on a file.

A migration allocates millions of small, long-lived objects (the `ast` and LibCST trees of a
module, their metadata) and few reference cycles. Each automatic collection walks every object
still alive, so on a large module the collector's passes grew with the square of its size: a
4,000-function module spent more than half its time in them (benchmarks/bench_scaling.py). With
the collector paused for the duration, time grows with the size and peak memory is the same; the
cycles a file leaves are collected once the collector runs again after it.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_LOCK = threading.Lock()
_DEPTH = 0
_WAS_ENABLED = False


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Pause `gc` inside the block; nested and concurrent blocks share one pause, and the
    collector is enabled again after the last one only when it was enabled before the first."""
    global _DEPTH, _WAS_ENABLED
    with _LOCK:
        if _DEPTH == 0:
            _WAS_ENABLED = gc.isenabled()
            gc.disable()
        _DEPTH += 1
    try:
        yield
    finally:
        with _LOCK:
            _DEPTH -= 1
            if _DEPTH == 0 and _WAS_ENABLED:
                gc.enable()
