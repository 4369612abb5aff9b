"""The strategy tier's gathers from whole reads (runtime/model_fn/strategy/whole_reads.py): a gather
from a variable the step writes densely reads the variable and gathers from that, with the values
and gradients of `ResourceGather`; one from a variable written by rows keeps `ResourceGather`."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
import tensorflow as tf

from tfmigrate.runtime.model_fn.strategy.whole_reads import gathers_read_whole, sparsely_written

pytestmark = pytest.mark.tf

_GATHERS = ("ResourceGather", "ResourceGatherNd")


def _op_types_of(graph) -> list[str]:
    """The op types of `graph` and of the functions it calls (a loop body's, a branch's)."""
    graph_def = graph.as_graph_def()
    return [node.op for node in graph_def.node] + [node.op for body in graph_def.library.function for node in body.node_def]


def _op_types(function, *args) -> list[str]:
    return _op_types_of(function.get_concrete_function(*args).graph)


def _lookups(table, ids):
    """The ways TF1 code gathers rows: tf.gather, embedding_lookup (one table and a partitioned
    list), gather_nd, and embedding_lookup_sparse."""
    sparse = tf.sparse.SparseTensor([[0, 0], [0, 1], [1, 0]], tf.gather(ids, [0, 1, 2]), [2, 2])
    return [
        tf.gather(table, ids),
        tf.nn.embedding_lookup(table, ids),
        tf.compat.v1.nn.embedding_lookup([table], ids),
        tf.gather_nd(table, tf.expand_dims(ids, 1)),
        tf.nn.embedding_lookup_sparse(table, sparse, None, combiner="mean"),
    ]


def _run(written_sparsely: bool | None):
    """A step gathering from a table and updating it densely from the gathers' gradients, traced
    with whole reads (None: without); (lookups, gradient pieces, table after, op types)."""
    table = tf.Variable(np.arange(24, dtype=np.float32).reshape(6, 4) / 10.0)

    @tf.function(autograph=False)
    def step(ids):
        lookups = _lookups(table, ids)
        loss = tf.add_n([tf.reduce_sum(tf.square(x)) for x in lookups])
        grad, = tf.compat.v1.gradients(loss, [table])
        table.assign_sub(0.1 * tf.convert_to_tensor(grad))  # (BERT's and ALBERT's optimizers: dense)
        return lookups, (grad.values, grad.indices, grad.dense_shape)

    ids = tf.constant([1, 4, 1, 0])
    if written_sparsely is None:
        types = _op_types(step, ids)
        result = step(ids)
    else:
        with gathers_read_whole(lambda variable: written_sparsely):
            types = _op_types(step, ids)
            result = step(ids)
    lookups, grad = tf.nest.map_structure(lambda t: t.numpy(), result)
    return lookups, grad, table.numpy(), types


def test_gathers_from_a_densely_written_variable_read_it_whole_with_the_same_values_and_gradients() -> None:
    lookups, grad, after, types = _run(written_sparsely=False)
    expected_lookups, expected_grad, expected_after, expected_types = _run(written_sparsely=None)
    assert not set(_GATHERS) & set(types)
    assert {"ResourceGather", "ResourceGatherNd"} <= set(expected_types)  # (what the trace made without)
    for a, b in zip(lookups, expected_lookups):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(grad, expected_grad):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(after, expected_after)


def test_gathers_from_a_variable_written_by_rows_keep_the_resource_gather() -> None:
    lookups, _, after, types = _run(written_sparsely=True)
    expected_lookups, _, expected_after, _ = _run(written_sparsely=None)
    assert {"ResourceGather", "ResourceGatherNd"} <= set(types)
    for a, b in zip(lookups, expected_lookups):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(after, expected_after)


@pytest.mark.parametrize(("home", "gather_on"), [
    ("/job:ps/task:0/device:CPU:0", None),  # a parameter server's variable
    ("/job:localhost/replica:0/task:0/device:CPU:0", "/device:GPU:0"),  # a CentralStorageStrategy's, for a GPU
], ids=["parameter-server", "another-device"])
def test_a_variable_elsewhere_keeps_the_resource_gather(home: str, gather_on: str | None) -> None:
    """A whole read of a variable on another machine or device would send it all every step: the
    gather stays `ResourceGather`, which sends the rows. (Built in a graph: no such device needed.)"""
    graph = tf.Graph()
    with graph.as_default(), gathers_read_whole(lambda variable: False):
        with tf.device(home):
            table = tf.compat.v1.get_variable("table", [6, 4], use_resource=True)
        with tf.device(gather_on) if gather_on else contextlib.nullcontext():
            tf.gather(table, [1, 2])
        with tf.device(home):
            tf.gather(table, [3])  # (beside it: a whole read, unless a parameter server's)
    types = [op.type for op in graph.get_operations()]
    assert types.count("ResourceGather") == (2 if "ps" in home else 1)
    assert types.count("GatherV2") == (0 if "ps" in home else 1)


def test_eager_gathers_are_left_as_they_are() -> None:
    table = tf.Variable(np.arange(12, dtype=np.float32).reshape(3, 4))
    with gathers_read_whole(lambda variable: False):
        np.testing.assert_array_equal(tf.gather(table, [2, 0]).numpy(), table.numpy()[[2, 0]])


class _control_flow:
    def __init__(self, version: int) -> None:
        self.version = version

    def __enter__(self) -> None:
        from tensorflow.python.ops import control_flow_util

        self.was = control_flow_util.ENABLE_CONTROL_FLOW_V2
        control_flow_util.ENABLE_CONTROL_FLOW_V2 = self.version == 2

    def __exit__(self, *exc) -> bool:
        from tensorflow.python.ops import control_flow_util

        control_flow_util.ENABLE_CONTROL_FLOW_V2 = self.was
        return False


@pytest.mark.parametrize("use_resource", [False, True], ids=["reference-variables", "resource-variables"])
def test_the_variables_a_tf1_build_writes_by_rows(use_resource: bool) -> None:
    """Scatters and V1 optimizers' sparse updates (on a reference variable and a resource one, in a
    TF 1.x loop and branch and in TF2's functional ones) name their variable; dense updates, and
    reads by rows, name none."""
    graph = tf.Graph()
    with graph.as_default(), _control_flow(version=2 if use_resource else 1):
        def variable(name):
            return tf.compat.v1.get_variable(name, [6, 4], use_resource=use_resource)

        ids = tf.constant([1, 3])
        by_adagrad, by_sgd, scattered, in_a_loop, dense, only_read = (variable(n) for n in (
            "by_adagrad", "by_sgd", "scattered", "in_a_loop", "dense", "only_read"))
        tf.compat.v1.train.AdagradOptimizer(0.1).minimize(tf.reduce_sum(tf.gather(by_adagrad, ids)))
        tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(tf.reduce_sum(tf.gather(by_sgd, ids)))
        tf.compat.v1.scatter_add(scattered, ids, tf.ones([2, 4]))

        def scatter_in_a_loop(i):
            with tf.control_dependencies([tf.compat.v1.scatter_add(in_a_loop, ids, tf.ones([2, 4]))]):
                return i + 1

        tf.compat.v1.while_loop(lambda i: i < 2, scatter_in_a_loop, [tf.constant(0)])
        tf.compat.v1.cond(ids[0] > 0, lambda: scatter_in_a_loop(ids[1]), lambda: ids[1])
        tf.compat.v1.train.AdamOptimizer(0.1).apply_gradients([(tf.ones([6, 4]), dense)])
        tf.gather(only_read, ids)
    assert sparsely_written(graph) >= {"by_adagrad", "by_sgd", "scattered", "in_a_loop"}
    assert not sparsely_written(graph) & {"dense", "only_read"}


@pytest.mark.parametrize(("optimizer", "gathers_kept"), [("dense", False), ("adagrad", True)])
def test_the_strategy_tier_gathers_from_whole_reads_unless_the_step_writes_rows(
        optimizer: str, gathers_kept: bool, tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An Estimator's model_fn looking up an embedding table: updated densely (as BERT's optimizer
    does), the strategy tier's step has no ResourceGather; updated by Adagrad's sparse update, it
    keeps it. Either way the table trains to the graph-mode tier's values."""
    import tfmigrate.runtime as tfm

    def input_fn():
        ids = np.array([[1, 4], [0, 5], [2, 2], [3, 1]], dtype=np.int32)
        return tf.data.Dataset.from_tensor_slices((ids, np.arange(4, dtype=np.float32))).repeat().batch(2)

    def model_fn(features, labels, mode):
        table = tf.compat.v1.get_variable("table", [6, 3], initializer=tf.compat.v1.constant_initializer(0.5))
        w = tf.compat.v1.get_variable("w", [3, 1], initializer=tf.compat.v1.constant_initializer(0.1))
        pooled = tf.reduce_mean(tf.nn.embedding_lookup(table, features), axis=1)
        loss = tf.reduce_mean(tf.square(tf.squeeze(tf.matmul(pooled, w), 1) - labels))
        step = tf.compat.v1.train.get_or_create_global_step()
        if optimizer == "adagrad":
            train_op = tf.compat.v1.train.AdagradOptimizer(0.1).minimize(loss, step)
        else:
            grads = tf.compat.v1.gradients(loss, [table, w])
            train_op = tf.group(*[tf.compat.v1.assign_sub(v, 0.1 * tf.convert_to_tensor(g)) for v, g in zip([table, w], grads)],
                                tf.compat.v1.assign_add(step, 1))
        return tfm.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    tables = {}
    for tier in ("graph", "strategy"):
        monkeypatch.setenv("TFMIGRATE_MODEL_FN_TIER", tier)
        estimator = tfm.estimator.Estimator(model_fn, model_dir=str(tmp_path / tier))
        estimator.train(input_fn, steps=6)
        tables[tier] = estimator.get_variable_value("table")
    types = [t for function in estimator._runner._functions.values()  # noqa: SLF001
             for concrete in function._list_all_concrete_functions()  # noqa: SLF001
             for t in _op_types_of(concrete.graph)]
    assert "ResourceGather" in types if gathers_kept else "ResourceGather" not in types
    assert "GatherV2" in types or gathers_kept
    np.testing.assert_allclose(tables["strategy"], tables["graph"], rtol=1e-6)
    assert not np.allclose(tables["strategy"], 0.5)  # (it trained)
