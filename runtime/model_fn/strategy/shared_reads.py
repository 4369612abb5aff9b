"""One read of a variable per value in a trace of the model_fn, as a TF 1.x graph had.

A TF 1.x reference variable was read through one `read` snapshot, whatever used it: the forward
pass, the gradients and the optimizer's update of the same step. A TF2 resource variable makes a
`ReadVariableOp` each time it is converted to a tensor, so a TF1 optimizer written against
reference variables reads a weight two or three times a step (BERT's AdamWeightDecayOptimizer
reads each decayed weight for the decay and again for the update): 205 reads a step on the
real-program lane's BERT, where its graph-tier step has 138 snapshots. On a model that small, the
extra ops cost the strategy tier about a twentieth of its speed.

While `reads_shared()` is entered, a read of a variable gives the tensor of its last read in the
same graph when nothing has used the variable's handle since, other than reads: no assignment,
no optimizer's training op, no function call or control flow op taking the handle. A later
write is ordered after that read by TF2's automatic control dependencies, as after any read, so
every value a trace computes is the one it would compute with a read of its own. Reads are not
shared:
- while a gradient tape may record (the tape watches each read);
- where a read asks not to copy (`no_copy`), where the variable reads through a caching device,
  or where it has an XLA sharding annotation;
- across graphs (a `cond` branch or loop body reads its own);
- under a control dependency the cached read lacks.
"""

from __future__ import annotations

import contextlib
import weakref
from typing import Any, Iterator

from tensorflow.python.eager import context
from tensorflow.python.eager import record
from tensorflow.python.framework import dtypes
from tensorflow.python.framework import ops
from tensorflow.python.ops import resource_variable_ops

from .tf1_build import patched

__all__ = ["reads_shared"]


class _GraphReads:
    """A graph's last read per handle tensor, and the last op per handle that did more than read."""

    def __init__(self) -> None:
        self.next_id: int | None = None  # the id of the next op to look at (ops get ids 1, 2, 3, ... as made)
        self.count = 0  # the ops looked at
        self.reads: dict[int, tuple[Any, int, frozenset]] = {}  # id(handle) -> (read tensor, its op id, control inputs)
        self.writes: dict[int, int] = {}  # id(handle) -> the last op id that used it other than a read

    def scan(self, graph: Any) -> bool:
        """Records the ops made since the last scan that take a resource other than to read it;
        False where the graph's op ids are not the run of numbers this reads them as."""
        nodes = graph._nodes_by_id  # noqa: SLF001 - id -> op, ids given in order
        total = len(nodes)
        if self.next_id is None:
            if not total:
                return True
            self.next_id = min(nodes.keys())
        while self.count < total and self.next_id in nodes:
            op = nodes[self.next_id]
            if op.type != "ReadVariableOp":
                for tensor in op.inputs:
                    if tensor.dtype == dtypes.resource:
                        self.writes[id(tensor)] = self.next_id
            self.count += 1
            self.next_id += 1
        return self.count == total


@contextlib.contextmanager
def reads_shared() -> Iterator[None]:
    """While inside, a variable read in a graph reuses that graph's last read of the same handle
    where nothing but reads took the handle since (the module's doc)."""
    base = resource_variable_ops.BaseResourceVariable
    original = base._read_variable_op  # noqa: SLF001
    graphs: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def read(variable: Any, no_copy: bool = False) -> Any:
        if (no_copy or context.executing_eagerly() or record.could_possibly_record()
                or getattr(variable, "_caching_device", None) is not None
                or getattr(variable, "_xla_sharding", None) is not None):
            return original(variable, no_copy)
        graph = ops.get_default_graph()
        if not hasattr(graph, "capture"):  # (a TF1 graph of the discovery build: reads as written)
            return original(variable, no_copy)
        handle = variable.handle
        if isinstance(handle, ops.EagerTensor) or handle.graph is not graph:
            handle = graph.capture(handle)
        state = graphs.get(graph)
        if state is None:
            state = graphs[graph] = _GraphReads()
        if not state.scan(graph):
            return original(variable, no_copy)
        controls = frozenset(id(op) for op in graph._current_control_dependencies())  # noqa: SLF001
        cached = state.reads.get(id(handle))
        if (cached is not None and state.writes.get(id(handle), 0) < cached[1] and controls <= cached[2]
                and graph._get_control_flow_context() is None):  # noqa: SLF001 - (TF1 control flow: its own reads)
            resource_variable_ops.variable_accessed(variable)
            return cached[0]
        result = original(variable, no_copy)
        if result.op.inputs[0] is handle:  # (a read of this graph's handle, not one bypassed into a context)
            state.reads[id(handle)] = (result, result.op._id, controls)  # noqa: SLF001
        return result

    with patched((base, "_read_variable_op", read)):
        yield
