"""Within one training step, every read of a variable runs before the step's writes to it, unless
the program orders them itself: what the hosted tier guarantees, on both of its paths.

A TF1 step's graph leaves that order open. BERT's warm-up reads the global step that a
`global_step.assign(global_step + 1)` beside its `train_op` writes, and a reference variable's
reads alias the buffer its update writes in place. TF's executor runs whichever op is ready first:
on an idle machine that is nearly always the read, under load not always, and the learning rate of
that step changes (a 6% difference in a weight after 11 steps, seen on a busy 2-core machine). A
`tf.function` orders the same ops by program order (automatic control dependencies), and so does
XLA on a TPU: the read, written first, runs first. The hosted tier makes that order explicit:
`order_reads_before_writes` for an iteration of the in-graph loop (`tpu_loop`), and
`order_step_reads_before_writes` for a step run by itself (`core.Estimator`). A program that
orders a read after a write (a `control_dependencies` block, a read of an assign's result) keeps
its order. The global step's read that Estimator makes before the model_fn, which its hooks fetch
with each step (`SummarySaverHook` labels and schedules its summaries by it), is no ancestor of
the step's fetches: `order_writes_after_read` orders the step's increment after it.
"""

from __future__ import annotations

import collections
from typing import Any, Iterable

import tensorflow as tf

__all__ = ["ancestors", "order_reads_before_writes", "order_step_reads_before_writes", "order_writes_after_read",
           "read_before_write_edges", "is_acyclic"]

PASS_THROUGH = frozenset({"Enter", "RefEnter", "Identity", "RefIdentity"})
# Ops whose output may share its input's buffer: reading it reads the variable.
_ALIASING = PASS_THROUGH | {"Reshape", "Squeeze", "ExpandDims", "Slice", "StridedSlice", "Bitcast"}
_VARIABLES = frozenset({"VariableV2", "Variable", "VarHandleOp"})
_RESOURCE_WRITES = ("Assign", "ResourceApply", "ResourceSparseApply", "ResourceScatter", "ResourceStridedSliceAssign")
_REF_READS = frozenset({"IsVariableInitialized"})
_BACK_EDGES = frozenset({"NextIteration", "RefNextIteration"})


def _variable_of(tensor: Any) -> str | None:
    """The variable `tensor` is, or is a view of, through identities, loop entries and reshapes."""
    op = tensor.op
    while op.type in _ALIASING and op.inputs:
        op = op.inputs[0].op
    return op.name if op.type in _VARIABLES else None


def _is_write(op: Any, tensor: Any) -> bool:
    if tensor.dtype._is_ref_dtype:  # noqa: SLF001 - a reference input is mutated (or read under its lock)
        return op.type not in _REF_READS
    return tensor.dtype == tf.resource and op.type.startswith(_RESOURCE_WRITES)


def read_before_write_edges(ops: list, context: Any) -> list[tuple[Any, Any]]:
    """(writer, reader) for each read of a variable and each write of it among `ops` (in creation
    order; only those directly in the control-flow `context`, None for a graph's top level) that
    the read does not already follow, nor precede."""
    reads: dict[str, list] = collections.defaultdict(list)
    writes: dict[str, list] = collections.defaultdict(list)
    for op in ops:
        if op._get_control_flow_context() is not context or op.type in PASS_THROUGH:  # noqa: SLF001
            continue
        for tensor in op.inputs:
            variable = _variable_of(tensor)
            if variable is not None:
                (writes if _is_write(op, tensor) else reads)[variable].append(op)
    writers = {op: i for i, op in enumerate(dict.fromkeys(op for ops_ in writes.values() for op in ops_))}
    if not writers:
        return []
    index = {op: i for i, op in enumerate(ops)}
    after_writers = [0] * len(ops)  # bit k: the op depends on writer k
    for i, op in enumerate(ops):
        bits = 0
        for source in [t.op for t in op.inputs] + list(op.control_inputs):
            j = index.get(source)
            if j is not None and j < i:  # later ops only through a loop's back edge
                bits |= after_writers[j] | (1 << writers[source] if source in writers else 0)
        after_writers[i] = bits
    edges = []
    for variable, variable_writers in writes.items():
        for writer in dict.fromkeys(variable_writers):
            bit = 1 << writers[writer]
            for reader in dict.fromkeys(reads.get(variable, ())):
                if reader is writer or after_writers[index[reader]] & bit or reader in writer.control_inputs:
                    continue
                edges.append((writer, reader))
    return edges


def is_acyclic(ops: list, extra: Iterable[tuple[Any, Any]] = ()) -> bool:
    """Whether `ops`, with the control edges `extra` (writer waits for reader) added, has no cycle
    (a loop's back edges aside)."""
    members = set(ops)
    pending = {op: 0 for op in ops}
    consumers: dict[Any, list] = collections.defaultdict(list)
    for op in ops:
        if op.type in _BACK_EDGES:
            continue
        for source in {t.op for t in op.inputs} | set(op.control_inputs):
            if source in members and source.type not in _BACK_EDGES:
                pending[op] += 1
                consumers[source].append(op)
    for writer, reader in extra:
        pending[writer] += 1
        consumers[reader].append(writer)
    ready = [op for op, count in pending.items() if count == 0]
    done = 0
    while ready:
        op = ready.pop()
        done += 1
        for consumer in consumers[op]:
            pending[consumer] -= 1
            if pending[consumer] == 0:
                ready.append(consumer)
    return done == len(ops)


def _add(edges: list[tuple[Any, Any]]) -> int:
    for writer, reader in edges:
        writer._add_control_input(reader)  # noqa: SLF001 - the graph is being built
    return len(edges)


def order_reads_before_writes(ops: list, context: Any) -> int:
    """Adds `read_before_write_edges(ops, context)` to the graph; returns how many. The caller checks
    the result for cycles (`is_acyclic`) with whatever else it orders."""
    return _add(read_before_write_edges(ops, context))


def ancestors(fetches: Iterable[Any], members: Any = None) -> set:
    """The ops that running `fetches` (ops or tensors) runs, through inputs and control inputs;
    with `members`, only those among them."""
    seen: set = set()
    todo = [getattr(fetch, "op", fetch) for fetch in fetches if fetch is not None]
    while todo:
        op = todo.pop()
        if op in seen or (members is not None and op not in members):
            continue
        seen.add(op)
        todo.extend(t.op for t in op.inputs)
        todo.extend(op.control_inputs)
    return seen


def order_step_reads_before_writes(graph: tf.Graph, first: int, fetches: Iterable[Any]) -> int | None:
    """Orders the reads before the writes of one training step: the top-level ops made since the
    graph had `first` ops (the input and model_fn) that running `fetches` (train_op, loss) runs.
    Variable initializers, savers and restores are none of these. Returns the number of edges
    added, or None where ordering would make a cycle (the graph is then left as written)."""
    ops = _step_ops(graph, first, fetches)
    edges = read_before_write_edges(ops, None)
    if not edges:
        return 0
    if not is_acyclic(ops, edges):
        return None
    return _add(edges)


def order_writes_after_read(graph: tf.Graph, first: int, fetches: Iterable[Any], variable: Any, read: Any) -> int:
    """The step's writes of `variable` (top-level ops made since the graph had `first` ops that
    running `fetches` runs) wait for `read`, a read of it made before them (so never after them):
    a hook fetching `read` with the step sees the value the step started from, as TF 1.x's
    `_increment_global_step` ordered it. Returns the number of edges added."""
    name = variable.op.name
    return _add([
        (op, read.op) for op in _step_ops(graph, first, fetches)
        if op._get_control_flow_context() is None and read.op not in op.control_inputs  # noqa: SLF001
        and any(_variable_of(tensor) == name and _is_write(op, tensor) for tensor in op.inputs)
    ])


def _step_ops(graph: tf.Graph, first: int, fetches: Iterable[Any]) -> list:
    """The ops made since the graph had `first` ops that running `fetches` runs, in creation order."""
    made = graph.get_operations()[first:]
    run = ancestors(fetches, set(made))
    return [op for op in made if op in run]
