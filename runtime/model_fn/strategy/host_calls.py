"""A TPUEstimatorSpec's `host_call` on the strategy tier, run on the host as a TPU ran it.

On a TPU, TPUEstimator outfed the host_call's tensors every step (each replica's, concatenated
along the batch axis) and ran its function on the host CPU, once per step; off a TPU it ran the
function's ops in every step's `Session.run`. Here the train step returns the tensors
(`host_calls_kept` keeps `TPUEstimatorSpec.as_estimator_spec` from calling the function in the
trace), the step loop stacks them per step, and `HostCall` calls the function for each step in a
`tf.function` of its own: its summary writers, made in that trace, are kept alive (a writer made
in a trace is gone once the trace drops it) and flushed when the train call ends.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any, Iterator

import tensorflow as tf
from tensorflow.python.ops import summary_ops_v2

from .tf1_build import patched

__all__ = ["HostCall", "call_host_fn", "host_calls_kept", "kept_host_calls", "read_before_the_step", "replicas_joined"]

_kept = threading.local()


def kept_host_calls() -> list | None:
    """The list `host_calls_kept` collects into in this thread, or None outside it."""
    return getattr(_kept, "calls", None)


@contextlib.contextmanager
def host_calls_kept() -> Iterator[list]:
    """While inside (in this thread), `TPUEstimatorSpec.as_estimator_spec` calls no `host_call`
    and makes no hook for it: it appends the `(fn, tensors)` pair to the yielded list."""
    previous = kept_host_calls()
    _kept.calls = calls = []
    try:
        yield calls
    finally:
        _kept.calls = previous


def call_host_fn(host_call: Any) -> Any:
    """`fn(*tensors)`, or `fn(**tensors)` for a dict: how TPUEstimator called a `(fn, tensors)` pair
    (a host_call, a TPU `eval_metrics`)."""
    fn, tensors = host_call
    return fn(**tensors) if isinstance(tensors, dict) else fn(*tensors)


def replicas_joined(strategy: tf.distribute.Strategy, value: Any) -> Any:
    """One step's host_call tensor over the replicas: concatenated along the batch axis, as
    TPUEstimator's outfeed joined the TPU cores' (a scalar, which a TPU could not outfeed: replica
    0's)."""
    parts = strategy.experimental_local_results(value)
    if len(parts) == 1:
        return parts[0]
    if parts[0].shape.rank == 0:
        return parts[0]
    return tf.concat(list(parts), axis=0)


# Ops a host_call tensor passes the global step through on its way to the host (`tf.reshape(gs, [1])`).
_CHAIN = frozenset({"Identity", "Reshape", "Cast", "ExpandDims", "Squeeze", "Pack"})


def read_before_the_step(tensor: Any, step_handle: Any, before: Any) -> Any:
    """`tensor` as TF 1.x computed it where it reads the global step through a chain of `_CHAIN`
    ops (`tf.reshape(global_step, [1])` made after the train_op): from `before`, the step's value at
    the start of the step. In TF 1.x such a read was unordered with the train_op and saw the step
    it started from (TPU programs label their host_call summaries with it); a trace orders reads after
    the writes made before them. Any other tensor is returned as it is."""
    chain = []
    op = tensor.op
    while op.type in _CHAIN and op.inputs:
        chain.append(op)
        op = op.inputs[0].op
    graph = tensor.graph
    if op.type != "ReadVariableOp" or not op.inputs or not chain or op.inputs[0] is not _inside(graph, step_handle):
        return tensor
    value = tf.cast(before, op.outputs[0].dtype)
    for link in reversed(chain):
        attrs = {name: link.node_def.attr[name] for name in link.node_def.attr}
        made = graph._create_op_internal(link.type, [value, *link.inputs[1:]],  # noqa: SLF001
                                         [out.dtype for out in link.outputs], attrs=attrs)
        value = made.outputs[0]
    return value


def _inside(graph: Any, handle: Any) -> Any:
    """`handle` as `graph` reads it (a function graph reads a variable through its capture)."""
    if not hasattr(graph, "capture") or (not isinstance(handle, tf.__internal__.EagerTensor) and handle.graph is graph):
        return handle
    return graph.capture(handle)


class HostCall:
    """The host_call function of one train call, traced once and called per step."""

    def __init__(self, fn: Any, structure: Any) -> None:
        self._fn = fn
        self._structure = structure
        self._writers: list = []
        self._function = tf.function(self._call, autograph=False)

    def _call(self, *flat: Any) -> None:
        tensors = tf.nest.pack_sequence_as(self._structure, list(flat))
        # (a `tf.summary` writer made in the trace is gone once the trace drops it; `tf.contrib.summary`'s
        # are shared by their logdir's name and live on)
        writer = summary_ops_v2._ResourceSummaryWriter  # noqa: SLF001
        with patched((writer, "__init__", _kept_alive(writer.__init__, self._writers))):
            call_host_fn((self._fn, tensors))

    def __call__(self, step_values: list) -> None:
        """Runs the function on one step's tensors (flattened as `structure`)."""
        self._function(*step_values)

    def close(self) -> None:
        for writer in self._writers:
            writer.flush()
        self._writers.clear()


def _kept_alive(init: Any, writers: list) -> Any:
    def keep(writer, *args, **kwargs):
        init(writer, *args, **kwargs)
        writers.append(writer)

    return keep
