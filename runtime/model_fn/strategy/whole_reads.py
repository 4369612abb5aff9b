"""Gathers from a variable in a trace of the model_fn take its whole read, as a TF 1.x graph
gathered from its `read` snapshot, unless the step writes the variable sparsely.

`tf.gather`, `tf.nn.embedding_lookup` and `tf.gather_nd` given a TF2 resource variable call its
`sparse_read`/`gather_nd`: a `ResourceGather(Nd)` op, which turns the variable copy-on-read for
the rest of the process. From then on each `ReadVariableOp` of it copies the whole variable,
so every step of a model_fn that gathers from an embedding table and updates it densely (BERT's
and ALBERT's optimizers) copies the table where the graph-mode tier copied nothing (a step of a
gather, a read and an assignment of a 30,000 x 128 table: 2.7 ms, against 1.2 ms without the
copies). While `gathers_read_whole()` is entered such a gather reads the variable (one read,
shared with the trace's other reads by `shared_reads.py`) and gathers from that: the values and
gradients (`IndexedSlices`) are the same, and the variable never turns copy-on-read.

A gather keeps `ResourceGather`, which reads the rows it needs and nothing else:
- from a variable the step writes sparsely (a scatter, a V1 optimizer's sparse update), which is
  copy-on-read whatever its gathers do;
- from a variable on another machine or device than the gather (a parameter server's, a
  `CentralStorageStrategy`'s on the CPU for a GPU's step): a whole read would send the whole
  variable there every step.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator

from tensorflow.python.distribute import device_util
from tensorflow.python.eager import context
from tensorflow.python.framework import device as device_lib
from tensorflow.python.framework import dtypes
from tensorflow.python.ops import array_ops
from tensorflow.python.ops import resource_variable_ops

from .tf1_build import patched

__all__ = ["gathers_read_whole", "sparsely_written"]

# The op types that write a variable in place by rows (TF1's reference variants and TF2's resource
# ones): their kernels make a resource variable copy-on-read.
_SPARSE_WRITES = ("Scatter", "ResourceScatter", "SparseApply", "ResourceSparseApply")
_PASSED_THROUGH = ("Identity", "RefIdentity", "Enter", "RefEnter", "Switch", "RefSwitch")


def sparsely_written(graph: Any) -> set[str]:
    """The names of the variables an op of `graph` writes by rows (`_SPARSE_WRITES`), in a
    functional loop's body, a branch or a called function too."""
    return {tensor.op.name for tensor in _written_by_rows(graph)}


def _written_by_rows(graph: Any) -> list:
    """The tensors of `graph` (a variable, its handle, or a function's argument) that its ops,
    and its functional ops' bodies, write by rows."""
    written = []
    for op in graph.get_operations():
        if op.type.startswith(_SPARSE_WRITES) and op.inputs:
            written.append(_source(op.inputs[0]))
        for attr, first in (("body", 0), ("then_branch", 1), ("else_branch", 1), ("f", 0)):
            if attr not in op.node_def.attr or not op.node_def.attr[attr].HasField("func"):
                continue
            body = _function_graph(graph, op.get_attr(attr).name)
            if body is None:
                continue
            arguments = {id(tensor): i for i, tensor in enumerate(body.inputs)}
            for tensor in _written_by_rows(body):
                i = arguments.get(id(tensor))
                if i is not None and first + i < len(op.inputs):
                    written.append(_source(op.inputs[first + i]))
    return written


def _beside_the_gather(variable: Any) -> bool:
    """Whether `variable` lives on this process's device where the gather is built (or either
    device is left to the placer): its read then moves nothing between devices or machines."""
    if not variable.device:
        return True
    home = device_lib.DeviceSpec.from_string(variable.device)
    if home.job not in (None, "localhost"):
        return False  # (a parameter server's, another worker's)
    here = device_lib.DeviceSpec.from_string(device_util.current() or "")
    if here.job not in (None, home.job) or here.task not in (None, home.task):
        return False
    if here.device_type is None or home.device_type is None:
        return True
    same_index = None in (here.device_index, home.device_index) or here.device_index == home.device_index
    return here.device_type.upper() == home.device_type.upper() and same_index


def _source(tensor: Any) -> Any:
    while tensor.op.type in _PASSED_THROUGH and tensor.op.inputs:  # (a TF1 loop's or branch's)
        tensor = tensor.op.inputs[0]
    return tensor


def _function_graph(graph: Any, name: str) -> Any:
    while graph is not None:
        function = getattr(graph, "_functions", {}).get(name)
        if function is not None:
            return getattr(function, "graph", None)
        graph = getattr(graph, "outer_graph", None)
    return None


@contextlib.contextmanager
def gathers_read_whole(written_sparsely: Callable[[Any], bool]) -> Iterator[None]:
    """While inside, a gather from a variable in a graph gathers from the variable's read, except
    from a variable `written_sparsely` (the module's doc)."""
    base = resource_variable_ops.BaseResourceVariable
    sparse_read, gather_nd = base.sparse_read, base.gather_nd

    def kept(variable: Any) -> bool:
        return (context.executing_eagerly() or variable.dtype.base_dtype == dtypes.variant
                or not _beside_the_gather(variable) or written_sparsely(variable))

    def gather(variable: Any, indices: Any, name: str | None = None) -> Any:
        if kept(variable):
            return sparse_read(variable, indices, name)
        return array_ops.gather(variable.value(), indices, name=name)

    def gather_by_index_tuples(variable: Any, indices: Any, name: str | None = None) -> Any:
        if kept(variable):
            return gather_nd(variable, indices, name)
        return array_ops.gather_nd(variable.value(), indices, name=name)

    with patched((base, "sparse_read", gather), (base, "gather_nd", gather_by_index_tuples)):
        yield
