"""An input_fn that returns tensors (from a one-shot iterator, or made by its own ops), read as a dataset (the strategy tier, `input_fn_data`).

TF 1.x's input_fns often return `dataset.make_one_shot_iterator().get_next()`, then reshape or
transpose those tensors: each `session.run` took the next element. A `tf.function` step needs
the dataset itself. So the input_fn is built once in a function graph of its own, with
`make_one_shot_iterator` handing out a stand-in whose `get_next()` gives placeholders. What the
input_fn did after `get_next()` becomes a map over the dataset it iterated:

    the dataset (made in that graph, taken out as a variant) .map(the ops between the placeholders
    and what the input_fn returned)

The graph has the seed and the random-op count the graph-mode build had when it called the
input_fn (`input_fn_data`: the RunConfig's seed, no op before), so a shuffle draws what it drew in
TF 1.x. An input_fn that made no iterator and returns tensors its own ops make (constants, fake data
drawn by random ops) is a dataset whose every element runs those ops again, as every TF 1.x step
did. Where the input_fn made more than one iterator, or draws random numbers after `get_next()` (a
map's draws would differ from TF 1.x's per-run ones), or its tensors come from a queue, a reader, a
feed or a variable, `NotADataset` says so: the strategy tier then runs the call in graph mode, and
`input_fn_data` reads the input_fn through a Session (`inputs.graph_input_dataset`).
"""

from __future__ import annotations

from typing import Any, Callable

import tensorflow as tf
from tensorflow.python.data.ops import dataset_ops
from tensorflow.python.framework import random_seed

from ._patching import patched

__all__ = ["IteratorInput", "NotADataset", "dataset_of_tensors", "iterator_input_detected"]


class NotADataset(Exception):
    """Why an input_fn's tensors cannot be read as the dataset they came from."""


class IteratorInput(Exception):
    """Raised in an eager call of the input_fn at its one-shot iterator: it returns tensors."""


def iterator_input_detected() -> Any:
    """While inside, an eager `make_one_shot_iterator` raises `IteratorInput` (the input_fn is then
    built by `dataset_of_tensors`, and not run on to its end eagerly)."""
    def raises(*args, **kwargs):
        raise IteratorInput

    return _one_shot_patched(raises)


def _one_shot_patched(replacement: Callable) -> Any:
    return patched((dataset_ops.DatasetV1, "make_one_shot_iterator", lambda self: replacement(self)),
                   (tf.compat.v1.data, "make_one_shot_iterator", replacement),
                   (dataset_ops, "make_one_shot_iterator", replacement))


class _StandIn:
    """What `make_one_shot_iterator` gives while the input_fn is built: `get_next()` placeholders."""

    def __init__(self, dataset: tf.data.Dataset) -> None:
        self.dataset = dataset
        self.placeholders: list | None = None

    def get_next(self, name: str | None = None) -> Any:
        if self.placeholders is not None:
            raise NotADataset("input_fn calls get_next() twice on one iterator")
        spec = self.dataset.element_spec
        self.placeholders = [tf.compat.v1.placeholder(s.dtype, s.shape) for s in tf.nest.flatten(spec)]
        return tf.nest.pack_sequence_as(spec, self.placeholders)


def dataset_of_tensors(call_input_fn: Callable[[], Any], graph_seed: int | None, random_ops_before: int) -> tf.data.Dataset:
    """The dataset an input_fn returning a one-shot iterator's tensors stands for (module doc)."""
    stand_ins: list[_StandIn] = []
    returned: list = []

    def one_shot(dataset):
        stand_ins.append(_StandIn(dataset))
        return stand_ins[-1]

    def build():
        graph = tf.compat.v1.get_default_graph()
        graph.seed = graph_seed
        random_seed._graph_to_seed_dict[graph] = random_ops_before  # noqa: SLF001 - TF1's op-seed count
        with _one_shot_patched(one_shot):
            result = call_input_fn()
        if isinstance(result, tf.data.Dataset):
            raise NotADataset("input_fn returned a dataset here and tensors when called eagerly")
        returned.append(result)
        return tf.nest.flatten(result)

    try:
        wrapped = tf.compat.v1.wrap_function(build, [])
    except NotADataset:
        raise
    except Exception as error:  # noqa: BLE001 - it built in graph mode: that tier runs it
        raise NotADataset(f"input_fn returns tensors, and could not be built as a dataset ({type(error).__name__})") from error
    if not stand_ins:
        return _made_every_step(wrapped, returned[0])
    if len(stand_ins) != 1 or stand_ins[0].placeholders is None:
        raise NotADataset("input_fn returns tensors, not from one one-shot iterator's get_next()")
    stand_in = stand_ins[0]
    graph = wrapped.graph
    outputs = [graph.as_graph_element(t) for t in tf.nest.flatten(returned[0])]
    feeds = [graph.as_graph_element(p) for p in stand_in.placeholders]
    if any("Random" in op.type for op in _between(feeds, outputs)):
        raise NotADataset("input_fn returns tensors and draws random numbers after get_next()")
    variant = wrapped.prune([], graph.as_graph_element(stand_in.dataset._variant_tensor))()  # noqa: SLF001
    dataset = tf.data.experimental.from_variant(variant, stand_in.dataset.element_spec)
    after = wrapped.prune(feeds, outputs)
    structure = returned[0]

    def element(*parts):
        return tf.nest.pack_sequence_as(structure, after(*tf.nest.flatten(parts)))

    return dataset.map(element)


# Ops whose tensors are not made afresh by each run of the input_fn's ops alone: they read a
# feed, a queue or a reader, state (variables, tables, `limit_epochs`' counter) or an iterator.
_NOT_PER_STEP = ("Placeholder", "Queue", "Reader", "Variable", "VarHandle", "Iterator", "Table", "CountUpTo")


def _made_every_step(wrapped: Any, structure: Any) -> tf.data.Dataset:
    """The dataset of an input_fn that returns tensors its own ops make (constants, fake data
    drawn by random ops): TF 1.x ran those ops again for every step, so each element runs them
    again (a random op's kernel is made once per iterator and draws on, as TF 1.x's did once per
    graph)."""
    flat = tf.nest.flatten(structure)
    if not flat or not all(isinstance(t, tf.Tensor) for t in flat):
        kinds = sorted({type(t).__name__ for t in flat if not isinstance(t, tf.Tensor)}) or ["nothing"]
        raise NotADataset(f"input_fn returns {', '.join(kinds)}, not a tf.data.Dataset or tensors")
    graph = wrapped.graph
    outputs = [graph.as_graph_element(t) for t in flat]
    stateful = sorted({op.type for op in _between([], outputs) if any(word in op.type for word in _NOT_PER_STEP)})
    if stateful:
        raise NotADataset(f"input_fn returns tensors made from {', '.join(stateful)} ops, not a tf.data.Dataset")
    run = wrapped.prune([], outputs)

    def element(_):
        return tf.nest.pack_sequence_as(structure, run())

    return tf.data.Dataset.from_tensors(0).repeat().map(element)


def _between(feeds: list, outputs: list) -> list:
    """The ops `outputs` compute from, stopping at `feeds`."""
    stop = {feed.op for feed in feeds}
    seen: set = set()
    todo = [t.op for t in outputs]
    while todo:
        op = todo.pop()
        if op in seen or op in stop:
            continue
        seen.add(op)
        todo.extend(t.op for t in op.inputs)
    return list(seen)
