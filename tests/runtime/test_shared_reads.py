"""The strategy tier's shared variable reads (runtime/model_fn/strategy/shared_reads.py): one read op
per value in a trace, and every value the trace computes the one a read of its own gives."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from tfmigrate.runtime.model_fn.strategy.shared_reads import reads_shared

pytestmark = pytest.mark.tf


def _reads(function, *args) -> int:
    graph = function.get_concrete_function(*args).graph
    count = sum(op.type == "ReadVariableOp" for op in graph.get_operations())
    for op in graph.get_operations():  # (a loop body's or cond branch's reads: graphs of their own)
        for attr in ("body", "then_branch", "else_branch"):
            if attr in op.node_def.attr:
                name = op.get_attr(attr).name
                count += sum(o.type == "ReadVariableOp" for o in graph._functions[name].graph.get_operations())  # noqa: SLF001
    return count


def _traced(build, *args):
    """`build` traced and run with shared reads, and again without: (results with, without, reads
    with, reads without), each run from the same variable values."""
    outcomes = []
    for shared in (True, False):
        variables = [tf.Variable(np.arange(1.0, 4.0, dtype=np.float32) * (i + 1)) for i in range(2)]
        function = tf.function(lambda *a: build(variables, *a), autograph=False)
        with reads_shared() if shared else _nothing():
            reads = _reads(function, *args)
            result = function(*args)
        outcomes.append((tf.nest.map_structure(lambda t: t.numpy(), result), [v.numpy() for v in variables], reads))
    return outcomes


class _nothing:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def test_reads_without_writes_between_are_one_read() -> None:
    def build(v, x):
        return tf.reduce_sum(v[0] * x) + tf.reduce_sum(v[0] + 1.0) + tf.reduce_sum(v[0].read_value())

    (with_, vars_with, reads_with), (without, vars_without, reads_without) = _traced(build, tf.constant(2.0))
    assert reads_with == 1 and reads_without == 3
    np.testing.assert_array_equal(with_, without)


@pytest.mark.parametrize("write", ["assign", "assign_add", "raw_op_on_the_handle", "scatter", "tf1_optimizer"])
def test_a_write_between_makes_a_new_read(write: str) -> None:
    def build(v, x):
        before = v[0] * x
        if write == "assign":
            v[0].assign(v[0] * 3.0)
        elif write == "assign_add":
            v[0].assign_add(tf.ones(3))
        elif write == "raw_op_on_the_handle":
            tf.raw_ops.AssignAddVariableOp(resource=v[0].handle, value=tf.ones(3))
        elif write == "scatter":
            v[0].scatter_add(tf.IndexedSlices(tf.ones(1), tf.constant([1])))
        else:
            loss = tf.reduce_sum(v[0] * v[1])
            tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(loss, var_list=[v[0]])  # (ResourceApplyGradientDescent)
        return before, v[0] * x, tf.identity(v[1])

    (with_, vars_with, _), (without, vars_without, _) = _traced(build, tf.constant(2.0))
    np.testing.assert_array_equal(with_[1], without[1])
    assert not np.array_equal(with_[0], with_[1])  # (the read after the write saw it)
    for a, b in zip(vars_with, vars_without):
        np.testing.assert_array_equal(a, b)


def test_a_control_dependency_the_first_read_lacks_makes_a_new_read() -> None:
    def build(v, x):
        first = v[0] + 0.0
        marker = tf.raw_ops.AssignVariableOp(resource=v[1].handle, value=v[1] * x)
        with tf.control_dependencies([marker]):
            second = v[0] + 0.0
        return first, second

    (_, _, reads_with), _ = _traced(build, tf.constant(2.0))
    assert reads_with == 3  # v[0] twice (the second under the dependency), v[1] once


def test_branches_and_loop_bodies_read_in_their_own_graph() -> None:
    def build(v, x):
        outside = v[0] * x
        branch = tf.cond(x > 1.0, lambda: v[0] * 2.0, lambda: v[0] * 3.0)

        def body(i, total):
            v[1].assign_add(tf.ones(3))
            return i + 1, total + tf.reduce_sum(v[1]) + tf.reduce_sum(v[1] * 2.0)

        _, looped = tf.while_loop(lambda i, _: i < 3, body, [tf.constant(0), tf.constant(0.0)])
        return outside, branch, looped, v[0] * 4.0

    (with_, vars_with, _), (without, vars_without, _) = _traced(build, tf.constant(2.0))
    for a, b in zip(with_, without):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(vars_with, vars_without):
        np.testing.assert_array_equal(a, b)


def test_not_under_a_gradient_tape() -> None:
    def build(v, x):
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(v[0] * x) + tf.reduce_sum(v[0] * v[0])
        return tape.gradient(y, v[0])

    (with_, _, _), (without, _, _) = _traced(build, tf.constant(2.0))
    np.testing.assert_array_equal(with_, without)
    np.testing.assert_array_equal(with_, 2.0 + 2.0 * np.arange(1.0, 4.0))


def test_tf1_gradients_through_a_shared_read() -> None:
    """`tf.compat.v1.gradients` with respect to the variable (its handle) flows through the one read."""
    def build(v, x):
        y = tf.reduce_sum(v[0] * x) + tf.reduce_sum(v[0] * v[0])
        return tf.compat.v1.gradients(y, [v[0]])[0]

    (with_, _, reads), (without, _, _) = _traced(build, tf.constant(2.0))
    assert reads == 1
    np.testing.assert_array_equal(with_, without)
