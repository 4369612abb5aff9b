"""Python's and NumPy's global random states kept around calls TF 1.x did not make (the runtime's
extra calls of a program's input_fn or model_fn draw nothing the program would see)."""

from __future__ import annotations

import contextlib
import random
from typing import Callable, Iterator

import numpy as np

__all__ = ["python_random_kept", "python_random_replay", "python_random_restored_on"]


@contextlib.contextmanager
def python_random_kept() -> Iterator[None]:
    """Python's and NumPy's random states as they were before."""
    put_back = python_random_replay()
    try:
        yield
    finally:
        put_back()


@contextlib.contextmanager
def python_random_restored_on(error: type) -> Iterator[None]:
    """Python's and NumPy's random states as they were before when `error` is raised: the graph-mode
    tier then builds the model_fn with the draws the strategy tier's attempt took."""
    put_back = python_random_replay()
    try:
        yield
    except error:
        put_back()
        raise


def python_random_replay() -> Callable[[], None]:
    """A function that puts Python's and NumPy's random states back to what they are now: an
    input_fn the runtime calls more than once, each call made after it, draws what the first one
    drew (TF 1.x called it once)."""
    states = random.getstate(), np.random.get_state()

    def replay() -> None:
        random.setstate(states[0])
        np.random.set_state(states[1])

    return replay
