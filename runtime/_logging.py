"""Logging helpers shared by the runtime modules (stdlib `logging`, logger `tfmigrate.runtime`)."""

from __future__ import annotations

import logging
import threading

logger = logging.getLogger("tfmigrate.runtime")

_warned: set[str] = set()
_warned_lock = threading.Lock()


def warn_once(key: str, message: str, *args: object) -> bool:
    """Logs `message % args` as a warning the first time `key` is seen in this process.

    Args:
        key: Identity of the warning; later calls with the same key log nothing.
        message: A `logging`-style format string.
        *args: Arguments for `message`.

    Returns:
        True when the warning was logged, False when `key` had been seen before.
    """
    with _warned_lock:
        if key in _warned:
            return False
        _warned.add(key)
    logger.warning(message, *args)
    return True
