"""`patched`: set attributes of TensorFlow's modules and classes for a block, then put them back."""

from __future__ import annotations

import contextlib
import inspect
from typing import Any, Iterator

__all__ = ["patched"]


@contextlib.contextmanager
def patched(*replacements: tuple[Any, str, Any]) -> Iterator[None]:
    """Sets each (owner, name, value) while inside; puts back exactly what was there (a class's
    staticmethod object, not the function `getattr` unwraps it to)."""
    saved = [(owner, name, inspect.getattr_static(owner, name)) for owner, name, _ in replacements]
    for owner, name, value in replacements:
        setattr(owner, name, value)
    try:
        yield
    finally:
        for owner, name, value in saved:
            setattr(owner, name, value)
