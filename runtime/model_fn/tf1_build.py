"""What a trace of the strategy tier keeps of TF 1.x's graph build around the model_fn: the
graph seed and op seeds of unseeded random ops, Python's random state, `init_from_checkpoint`
done once, and no optimizer updates outside TRAIN (each function's doc says why)."""

from __future__ import annotations

import contextlib
import inspect
import itertools
import random
from typing import Any, Iterator

import numpy as np
import tensorflow as tf
from tensorflow.python.eager import context
from tensorflow.python.framework import random_seed
from tensorflow.python.training import checkpoint_utils

from ..inputs import ModeKeys

__all__ = ["eager_graph_seeds", "graph_seeds", "optimizer_updates_skipped", "patched", "python_random_kept",
           "python_random_restored_on", "restores_at_discovery"]


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


@contextlib.contextmanager
def optimizer_updates_skipped(mode: str) -> Iterator[None]:
    """Outside TRAIN, a V1 optimizer's `minimize`/`apply_gradients` build nothing: model_fns that
    build their train_op in every mode were evaluated by TF1 without running it, and a tf.function
    would run it. (An optimizer that overrides `apply_gradients` still builds its writes, which
    send that call to graph mode.)"""
    if mode == ModeKeys.TRAIN:
        yield
        return
    optimizer = tf.compat.v1.train.Optimizer
    with patched((optimizer, "minimize", lambda self, *args, **kwargs: tf.no_op()),
                 (optimizer, "apply_gradients", lambda self, *args, **kwargs: tf.no_op())):
        yield


@contextlib.contextmanager
def python_random_kept() -> Iterator[None]:
    """Python's and NumPy's random states as they were before."""
    states = random.getstate(), np.random.get_state()
    try:
        yield
    finally:
        random.setstate(states[0])
        np.random.set_state(states[1])


@contextlib.contextmanager
def python_random_restored_on(error: type) -> Iterator[None]:
    """Python's and NumPy's random states as they were before when `error` is raised: the graph-mode
    tier then builds the model_fn with the draws the strategy tier's attempt took."""
    states = random.getstate(), np.random.get_state()
    try:
        yield
    except error:
        random.setstate(states[0])
        np.random.set_state(states[1])
        raise


@contextlib.contextmanager
def eager_graph_seeds(seed: int | None, start: int) -> Iterator[None]:
    """Random ops made eagerly inside (an input_fn's shuffle) take the seeds a TF1 graph with seed
    `seed` gave them, op seeds counting on from `start`, instead of eager execution's own."""
    if seed is None:
        yield
        return
    original = random_seed.get_seed
    counter = itertools.count(start)

    def get_seed(op_seed):
        if not context.executing_eagerly():
            return original(op_seed)
        if op_seed is None:
            op_seed = next(counter)
        seeds = random_seed._truncate_seed(seed), random_seed._truncate_seed(op_seed)  # noqa: SLF001
        return (0, random_seed._MAXINT32) if seeds == (0, 0) else seeds  # noqa: SLF001

    random_seed.get_seed = get_seed
    try:
        yield
    finally:
        random_seed.get_seed = original


@contextlib.contextmanager
def restores_at_discovery() -> Iterator[None]:
    """`init_from_checkpoint` in a traced model_fn does nothing: its restore already set the
    initial values the discovery computed (TF1 ran it as an initializer, once). In a function it
    would restore on every step."""
    with patched((checkpoint_utils, "_init_from_checkpoint", lambda *args, **kwargs: None)):
        yield


@contextlib.contextmanager
def graph_seeds(extra: dict) -> Iterator[None]:
    """The trace's graph seed and random-op count as the graph-mode build had them where it called
    the model_fn: its unseeded random ops (dropout, a shuffle) get TF 1.x's op seeds."""
    graph = tf.compat.v1.get_default_graph()
    saved_seed, saved_count = graph.seed, random_seed._graph_to_seed_dict.get(graph)  # noqa: SLF001
    graph.seed = extra.get("graph_seed")
    random_seed._graph_to_seed_dict[graph] = extra.get("random_ops_before", 0)  # noqa: SLF001
    try:
        yield
    finally:
        graph.seed = saved_seed
        if saved_count is None:
            random_seed._graph_to_seed_dict.pop(graph, None)  # noqa: SLF001
        else:
            random_seed._graph_to_seed_dict[graph] = saved_count  # noqa: SLF001
