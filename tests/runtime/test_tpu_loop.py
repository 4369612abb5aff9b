"""`tfm.estimator.tpu.TPUEstimator` trains `iterations_per_loop` steps per session.run in an in-graph
loop where that keeps the per-step numbers (`runtime/model_fn/graph/tpu_loop.py`), and step by step
otherwise. The numbers of both ways are compared here bit for bit; the oracle comparison is
`hosted_programs/tpu_loop.py` in test_hosted_estimator."""

from __future__ import annotations

import logging

import numpy as np
import pytest
import tensorflow as tf

import tfmigrate.runtime as tfm
from tfmigrate.runtime.model_fn.graph.tpu_loop import NotLoopable, order_reads_before_writes

pytestmark = pytest.mark.tf


@pytest.fixture(autouse=True)
def _graph_tier(monkeypatch: pytest.MonkeyPatch) -> None:
    """These are the graph-mode tier's two training paths, whichever tier is the default."""
    monkeypatch.setenv("TFMIGRATE_MODEL_FN_TIER", "graph")

rng = np.random.RandomState(1)
X = rng.randn(64, 5).astype(np.float32)
Y = (X[:, 0] > 0).astype(np.int32)
LOOP_LOG = "in an in-graph loop"


def input_fn(params):
    return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).repeat().batch(params["batch_size"], drop_remainder=True)


def bert_style_model_fn(features, labels, mode, params):
    """Warm-up read of the global step beside a `global_step.assign(global_step + 1)` in train_op, a
    hand-written optimizer assigning reference variables, an UPDATE_OPS-style side assignment."""
    w = tf.compat.v1.get_variable("w", [5, 2], initializer=tf.compat.v1.glorot_uniform_initializer(seed=1))
    b = tf.compat.v1.get_variable("b", [2], initializer=tf.compat.v1.zeros_initializer())
    logits = tf.matmul(features["x"], w) + b
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    if params.get("summary"):
        tf.compat.v1.summary.scalar("my_loss", loss)
    global_step = tf.compat.v1.train.get_or_create_global_step()
    warm = tf.cast(global_step, tf.float32) / 4.0
    rate = tf.where(warm < 1.0, 0.5 * warm + 0.01, 0.5)
    grads = tf.gradients(loss, [w, b])
    updates = [var.assign(var - rate * grad) for var, grad in zip([w, b], grads)]
    train_op = tf.group(updates, [global_step.assign(global_step + 1)])
    host_call = None
    if params.get("host_call"):
        host_call = (lambda step: [tf.no_op()], [tf.reshape(global_step, [1])])
    return tfm.estimator.tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op, host_call=host_call)


def train(tmp_path, iterations, steps=11, input_fn=input_fn, model_fn=bert_style_model_fn, **params):
    config = tfm.estimator.tpu.RunConfig(
        model_dir=str(tmp_path / f"model_{iterations}"), save_checkpoints_steps=4, save_summary_steps=3,
        tpu_config=tfm.estimator.tpu.TPUConfig(iterations_per_loop=iterations))
    estimator = tfm.estimator.tpu.TPUEstimator(model_fn, config=config, use_tpu=False, train_batch_size=8, params=params)
    estimator.train(input_fn, steps=steps)
    return estimator


def values(estimator):
    return {name: estimator.get_variable_value(name) for name in estimator.get_variable_names()}


def reads_first(steps: int, w: np.ndarray) -> dict[str, np.ndarray]:
    """`bert_style_model_fn`'s weights after `steps` steps from the initial weight `w`, where each
    step's rate reads the global step before the step's increment (the runtime's guarantee,
    docs/runtime.md), in float64."""
    w = w.astype(np.float64)
    b = np.zeros(2)
    for step in range(steps):
        start = step * 8 % len(X)
        x, y = X[start:start + 8].astype(np.float64), Y[start:start + 8]
        logits = x @ w + b
        p = np.exp(logits - logits.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        p[np.arange(8), y] -= 1.0
        g = p / 8
        rate = 0.5 * step / 4.0 + 0.01 if step / 4.0 < 1.0 else 0.5
        w, b = w - rate * x.T @ g, b - rate * g.sum(0)
    return {"w": w, "b": b}


def test_both_paths_read_the_step_before_writing_it_every_time(tmp_path, caplog) -> None:
    """A model_fn whose warm-up reads the global step that its train_op increments, unordered (as
    BERT's does): each step's reads run before its writes, on the loop and step by step, run after
    run. TF's executor alone ran them in either order under load (6% apart after 11 steps)."""
    runs = {}
    for attempt in range(3):
        for iterations in (5, 1):
            caplog.clear()
            with caplog.at_level(logging.INFO, logger="tfmigrate.runtime"):
                estimator = train(tmp_path / str(attempt), iterations)
            assert (LOOP_LOG in caplog.text) == (iterations > 1)
            runs[attempt, iterations] = values(estimator)
    initial = tf.train.load_variable(str(tmp_path / "0" / "model_5" / "model.ckpt-0"), "w")  # the graph's own draw
    expected = reads_first(11, initial)
    first = runs[0, 5]
    assert first["global_step"] == 11
    for name in ("w", "b"):
        np.testing.assert_allclose(first[name], expected[name], rtol=1e-5, atol=1e-6, err_msg=name)
    for key, run in runs.items():
        assert run.keys() == first.keys()
        for name in first:
            np.testing.assert_array_equal(run[name], first[name], err_msg=f"{key} {name}")
    looped = tf.train.get_checkpoint_state(str(tmp_path / "0" / "model_5")).all_model_checkpoint_paths
    assert [path.rsplit("-", 1)[1] for path in looped] == ["0", "4", "8", "11"]


@pytest.mark.parametrize(
    ("params", "reason"),
    [({"host_call": True}, "the spec has training hooks (or a host_call)"), ({"summary": True}, "model_fn makes summaries")],
)
def test_what_a_loop_would_change_trains_step_by_step(tmp_path, caplog, params, reason) -> None:
    with caplog.at_level(logging.INFO, logger="tfmigrate.runtime"):
        estimator = train(tmp_path, 5, steps=6, **params)
    assert f"Training one step per session.run: {reason}" in caplog.text
    assert estimator.get_variable_value("global_step") == 6


def test_tensor_input_and_user_hooks_train_step_by_step(tmp_path, caplog) -> None:
    def tensor_input_fn(params):
        return tf.compat.v1.data.make_one_shot_iterator(input_fn(params)).get_next()

    with caplog.at_level(logging.INFO, logger="tfmigrate.runtime"):
        train(tmp_path, 5, steps=3, input_fn=tensor_input_fn)
    assert "input_fn returns tensors, not a Dataset" in caplog.text
    caplog.clear()
    config = tfm.estimator.tpu.RunConfig(model_dir=str(tmp_path / "hooked"), tpu_config=tfm.estimator.tpu.TPUConfig(iterations_per_loop=5))
    estimator = tfm.estimator.tpu.TPUEstimator(bert_style_model_fn, config=config, use_tpu=False, train_batch_size=8)
    with caplog.at_level(logging.INFO, logger="tfmigrate.runtime"):
        estimator.train(input_fn, steps=3, hooks=[tf.compat.v1.train.StepCounterHook(every_n_steps=1, output_dir=str(tmp_path))])
    assert LOOP_LOG not in caplog.text
    assert estimator.get_variable_value("global_step") == 3


def _loop_body_ops(build):
    graph = tf.Graph()
    with graph.as_default():
        contexts, first = [], len(graph.get_operations())

        def body(i):
            contexts.append(graph._get_control_flow_context())
            with tf.control_dependencies(build()):
                return i + 1

        from tfmigrate.runtime.model_fn.strategy.tf1_build import tf1_control_flow

        with tf1_control_flow():
            tf.compat.v1.while_loop(lambda i: i < 3, body, [tf.constant(0)], parallel_iterations=1)
        return graph.get_operations()[first:], contexts[0]


def test_reads_are_ordered_before_writes_unless_the_program_orders_them() -> None:
    made = {}

    def build():
        with tf.compat.v1.variable_scope("v", use_resource=False, reuse=tf.compat.v1.AUTO_REUSE):
            ref = tf.compat.v1.get_variable("ref", [2], initializer=tf.compat.v1.zeros_initializer())
        res = tf.compat.v1.get_variable("res", [], initializer=tf.compat.v1.zeros_initializer(), use_resource=True)
        made["read"] = tf.reduce_sum(ref)  # reads the reference variable's buffer
        made["write"] = ref.assign(ref + 1.0)
        made["res_read"] = res.read_value()
        made["res_write"] = res.assign_add(1.0)
        with tf.control_dependencies([made["res_write"]]):
            made["after"] = res.read_value()  # the program orders this read after the write
        return [made["read"], made["write"], made["res_read"].op, made["after"].op]

    ops, context = _loop_body_ops(build)
    assert order_reads_before_writes(ops, context) >= 2
    write, res_write = made["write"].op, made["res_write"].op
    assert made["read"].op in write.control_inputs or any(op.type == "Sum" for op in write.control_inputs)
    read_op = made["res_read"].op.inputs[0].op  # read_value() is an identity of the ReadVariableOp
    assert read_op.type == "ReadVariableOp" and read_op in res_write.control_inputs
    assert made["after"].op.inputs[0].op not in res_write.control_inputs


def test_an_ordering_cycle_is_refused() -> None:
    made = {}

    def build():
        a = tf.compat.v1.get_variable("a", [], initializer=tf.compat.v1.zeros_initializer(), use_resource=True)
        b = tf.compat.v1.get_variable("b", [], initializer=tf.compat.v1.zeros_initializer(), use_resource=True)
        write_a = a.assign_add(1.0)
        write_b = b.assign_add(1.0)
        with tf.control_dependencies([write_a]):
            read_b = b.read_value()  # b read after a is written ...
        with tf.control_dependencies([write_b]):
            read_a = a.read_value()  # ... and a read after b is written
        return [read_a.op, read_b.op]

    ops, context = _loop_body_ops(build)
    with pytest.raises(NotLoopable, match="cycle"):
        order_reads_before_writes(ops, context)


def test_input_that_ends_inside_a_loop_stops_where_step_by_step_did(tmp_path, caplog) -> None:
    def finite_input_fn(params):  # 64 examples in batches of 8: the input ends after step 8
        return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(params["batch_size"], drop_remainder=True)

    with caplog.at_level(logging.INFO, logger="tfmigrate.runtime"):
        looped = train(tmp_path, 5, steps=None, input_fn=finite_input_fn)
    assert LOOP_LOG in caplog.text
    stepped = train(tmp_path, 1, steps=None, input_fn=finite_input_fn)
    expected, actual = values(stepped), values(looped)
    # The run that finds the input ended still runs the data-free `global_step.assign`: TF 2.15's
    # TPUEstimator gives 9 every time; step by step here, 8 or 9 from run to run; the loop, 9.
    assert actual["global_step"] == 9 and expected["global_step"] in (8, 9)
    for name in expected.keys() - {"global_step"}:
        np.testing.assert_array_equal(actual[name], expected[name], err_msg=name)


def test_a_step_orders_its_reads_before_its_writes_and_leaves_set_up_ops_alone() -> None:
    from tfmigrate.runtime.model_fn.step_order import order_step_reads_before_writes

    graph = tf.Graph()
    with graph.as_default():
        step = tf.compat.v1.train.get_or_create_global_step()
        first = len(graph.get_operations())
        rate = tf.cast(step, tf.float32) * 0.1  # the warm-up's read
        w = tf.compat.v1.get_variable("w", [], initializer=tf.compat.v1.ones_initializer(), use_resource=False)
        update = w.assign_sub(rate * w)
        increment = step.assign_add(1)
        train_op = tf.group(update, increment)
        assert order_step_reads_before_writes(graph, first, [train_op]) >= 2
        warm_up_ops = {rate.op, *(t.op for t in rate.op.inputs)}
        warm_up_ops |= {t.op for op in list(warm_up_ops) for t in op.inputs}
        assert set(increment.op.control_inputs) & warm_up_ops  # the increment waits for the warm-up's read
        assert not w.initializer.control_inputs and not step.initializer.control_inputs

        a = tf.compat.v1.get_variable("a", [], use_resource=True)
        b = tf.compat.v1.get_variable("b", [], use_resource=True)
        first = len(graph.get_operations())
        write_a, write_b = a.assign_add(1.0), b.assign_add(1.0)
        with tf.control_dependencies([write_a]):
            read_b = b.read_value()
        with tf.control_dependencies([write_b]):
            read_a = a.read_value()
        before = [list(op.control_inputs) for op in (write_a.op, write_b.op)]
        assert order_step_reads_before_writes(graph, first, [read_a, read_b]) is None  # a cycle: left as written
        assert [list(op.control_inputs) for op in (write_a.op, write_b.op)] == before


def test_the_step_read_the_hooks_fetch_runs_before_the_step_increments_it() -> None:
    """Estimator's global step read (made before the model_fn; `SummarySaverHook` fetches it with
    each step and labels its summaries by it) is no ancestor of the train_op: the step's increment
    is ordered after it, so a hook never reads the incremented value (under load TF's executor ran
    the increment first and the summaries moved one step)."""
    from tensorflow.python.training import training_util

    from tfmigrate.runtime.model_fn.step_order import order_writes_after_read

    graph = tf.Graph()
    with graph.as_default():
        step = tf.compat.v1.train.get_or_create_global_step()
        first = len(graph.get_operations())
        step_read = training_util._get_or_create_global_step_read(graph)  # noqa: SLF001
        w = tf.compat.v1.get_variable("w", [], initializer=tf.compat.v1.ones_initializer(), use_resource=False)
        loss = w * w
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
        increments = [op for op in graph.get_operations()[first:] if op.type in ("AssignAdd", "AssignAddVariableOp")]
        assert len(increments) == 1 and step_read.op not in increments[0].control_inputs
        assert order_writes_after_read(graph, first, [train_op, loss], step, step_read) == 1
        assert step_read.op in increments[0].control_inputs
        assert order_writes_after_read(graph, first, [train_op, loss], step, step_read) == 0  # once
        update = [op for op in graph.get_operations()[first:] if op.type.endswith("ApplyGradientDescent")][0]
        assert step_read.op not in update.control_inputs  # only the step's own writes wait


def test_the_estimators_step_by_step_training_orders_its_increment_after_the_hooks_read(tmp_path) -> None:
    """The same order in the graph `tfm.estimator.Estimator` trains (seen from a hook's `begin`)."""
    from tensorflow.python.training import training_util

    seen = {}

    class Look(tf.compat.v1.train.SessionRunHook):
        def begin(self):
            graph = tf.compat.v1.get_default_graph()
            read = training_util._get_or_create_global_step_read(graph)  # noqa: SLF001
            seen["waits"] = [read.op in op.control_inputs for op in graph.get_operations() if op.type in ("AssignAdd", "AssignAddVariableOp")]

    def model_fn(features, labels, mode):
        w = tf.compat.v1.get_variable("w", [5, 2], initializer=tf.compat.v1.zeros_initializer())
        loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, tf.matmul(features["x"], w))
        step = tf.compat.v1.train.get_global_step()
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
        return tfm.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    estimator = tfm.estimator.Estimator(model_fn, model_dir=str(tmp_path))
    estimator.train(lambda: input_fn({"batch_size": 8}), steps=2, hooks=[Look()])
    assert seen["waits"] == [True]
