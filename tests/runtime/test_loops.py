"""Loop functions and StandardTrainer/StandardEvaluator: exact step counts, end of data, one trace."""

from __future__ import annotations

import dataclasses

import keras
import numpy as np
import pytest
import tensorflow as tf

import tfmigrate.runtime as tfm
from tfmigrate.runtime import loops

pytestmark = pytest.mark.tf

_RNG = np.random.RandomState(0)
X = _RNG.rand(48, 3).astype("float32")
Y = (X @ np.array([[1.0], [-2.0], [0.5]], "float32") + 0.3).astype("float32")


def summing_step(total: tf.Variable):
    def step_fn(iterator):
        value = next(iterator)
        total.assign_add(value)
        return value

    return step_fn


# -- create_loop_fn ------------------------------------------------------------------------------


def test_python_loop_runs_exactly_num_steps_and_leaves_the_rest():
    seen = []
    loop_fn = tfm.create_loop_fn(lambda iterator: seen.append(next(iterator)))
    iterator = iter(range(10))
    assert loop_fn(iterator, 4).num_steps == 4
    assert seen == [0, 1, 2, 3] and next(iterator) == 4
    assert loop_fn(iterator, 0).num_steps == 0 and len(seen) == 4


def test_python_loop_stops_cleanly_at_the_end_of_data_and_folds_state():
    loop_fn = tfm.create_loop_fn(lambda iterator: next(iterator) * 10)
    output = loop_fn(iter(range(5)), 8, state=0, reduce_fn=lambda state, out: state + out)
    assert output == (5, 100)
    assert loop_fn(iter(range(5)), -1).num_steps == 5

    total = tf.Variable(0, dtype=tf.int64)
    graph_loop = tfm.create_loop_fn(tfm.create_one_step_fn(summing_step(total)))
    assert graph_loop(iter(tf.data.Dataset.range(6)), 100).num_steps == 6
    assert int(total.numpy()) == 15


def test_one_step_fn_runs_no_step_on_exhausted_input():
    """A step's data-independent updates must not run once more at the end of the data."""
    steps = tf.Variable(0)
    total = tf.Variable(0, dtype=tf.int64)

    def step_fn(iterator):
        steps.assign_add(1)  # Like the optimizer's `iterations += 1`: does not depend on the data.
        total.assign_add(next(iterator))

    one_step = tfm.create_one_step_fn(step_fn)
    iterator = iter(tf.data.Dataset.range(5))
    output = tfm.create_loop_fn(one_step)(iterator, -1)
    assert (output.num_steps, int(steps.numpy()), int(total.numpy())) == (5, 5, 10)
    assert one_step.tf_function.experimental_get_tracing_count() == 1


def test_negative_num_steps_are_rejected():
    with pytest.raises(ValueError, match=r"`num_steps` \(-2\)"):
        tfm.create_loop_fn(next)(iter(range(3)), -2)


# -- create_tf_while_loop_fn ---------------------------------------------------------------------


def test_while_loop_runs_exactly_num_steps_in_one_trace():
    total = tf.Variable(0, dtype=tf.int64)
    loop_fn = tfm.create_tf_while_loop_fn(summing_step(total))
    iterator = iter(tf.data.Dataset.range(100))
    assert int(loop_fn(iterator, 3).num_steps) == 3
    assert int(total.numpy()) == 0 + 1 + 2
    assert int(loop_fn(iterator, 5).num_steps) == 5
    assert int(total.numpy()) == sum(range(8))
    assert int(next(iterator)) == 8  # No element beyond num_steps was consumed.
    assert int(loop_fn(iterator, 0).num_steps) == 0 and int(next(iterator)) == 9
    assert loop_fn.tf_function.experimental_get_tracing_count() == 1


def test_while_loop_stops_cleanly_at_the_end_of_data():
    total = tf.Variable(0, dtype=tf.int64)
    loop_fn = tfm.create_tf_while_loop_fn(summing_step(total))
    iterator = iter(tf.data.Dataset.range(5))
    assert int(loop_fn(iterator, 3).num_steps) == 3
    assert int(loop_fn(iterator, 10).num_steps) == 2
    assert int(loop_fn(iterator, 10).num_steps) == 0
    assert int(total.numpy()) == 10
    assert int(loop_fn(iter(tf.data.Dataset.range(7)), -1).num_steps) == 7


def test_while_loop_folds_tensor_state():
    loop_fn = tfm.create_tf_while_loop_fn(lambda iterator: next(iterator) * 10)
    output = loop_fn(
        iter(tf.data.Dataset.range(6)), 4, state=tf.constant(0, tf.int64), reduce_fn=lambda state, out: state + out
    )
    assert int(output.num_steps) == 4 and int(output.state) == 60


def test_while_loop_step_may_draw_one_element():
    def greedy_step(iterator):
        return next(iterator) + next(iterator)

    with pytest.raises(RuntimeError, match="drew a second element"):
        tfm.create_tf_while_loop_fn(greedy_step)(iter(tf.data.Dataset.range(4)), 2)


# -- StandardTrainer / StandardEvaluator ---------------------------------------------------------


def make_model(seed=3):
    keras.utils.set_random_seed(seed)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4, activation="tanh"), keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(0.1, momentum=0.9), loss="mse", metrics=["mae"])
    return model


def dataset(batch_size=8):
    return tf.data.Dataset.from_tensor_slices((X, Y)).repeat().batch(batch_size, drop_remainder=True)


OPTIONS = {
    "tf_while_loop": tfm.StandardTrainerOptions(),
    "tf_function_per_step": tfm.StandardTrainerOptions(use_tf_while_loop=False),
    "eager": tfm.StandardTrainerOptions(use_tf_function=False, use_tf_while_loop=False),
}


def test_while_loop_gives_the_same_weights_as_the_python_loops():
    weights, logs = {}, {}
    strategy = tf.distribute.get_strategy()
    for name, options in OPTIONS.items():
        model = make_model()
        trainer = tfm.KerasModelTrainer(model, dataset(), strategy=strategy, options=options)
        trainer.train(3)
        logs[name] = trainer.train(tf.constant(4))
        assert trainer.last_loop_num_steps == 4 and int(model.optimizer.iterations.numpy()) == 7
        weights[name] = model.get_weights()
    for name in ("tf_function_per_step", "eager"):
        for reference, actual in zip(weights["tf_while_loop"], weights[name]):
            np.testing.assert_allclose(actual, reference, rtol=1e-6, atol=1e-7)
        assert logs[name]["loss"] == pytest.approx(logs["tf_while_loop"]["loss"], rel=1e-6)
    assert set(logs["tf_while_loop"]) == {"loss", "mae"}
    assert 0 < logs["tf_while_loop"]["loss"] < 10


@pytest.mark.parametrize("name", ["tf_while_loop", "tf_function_per_step"])
def test_trainer_stops_cleanly_at_the_end_of_data(name):
    model = make_model()
    finite = tf.data.Dataset.from_tensor_slices((X, Y)).batch(8)  # 6 batches.
    trainer = tfm.KerasModelTrainer(model, finite, strategy=tf.distribute.get_strategy(), options=OPTIONS[name])
    trainer.train(4)
    trainer.train(10)
    assert trainer.last_loop_num_steps == 2
    assert int(model.optimizer.iterations.numpy()) == 6


class SumTrainer(tfm.StandardTrainer):
    """Adds up its per-replica input batches; records the hooks."""

    def __init__(self, train_dataset, options=None):
        super().__init__(train_dataset, options)
        self.total = tf.Variable(0.0)
        self.calls = []

    def train_loop_begin(self):
        self.calls.append("begin")

    def train_step(self, iterator):
        per_replica = self.strategy.run(tf.reduce_sum, args=(next(iterator),))
        self.total.assign_add(self.strategy.reduce("SUM", per_replica, axis=None))

    def train_loop_end(self):
        self.calls.append("end")
        return {"total": self.total}


def test_trainer_hooks_and_datasets_from_a_function_of_input_context():
    contexts = []

    def dataset_fn(input_context):
        contexts.append(input_context)
        return tf.data.Dataset.range(1, 11, output_type=tf.float32).batch(2)

    trainer = SumTrainer(dataset_fn)
    logs = trainer.train(3)
    assert float(logs["total"]) == 1 + 2 + 3 + 4 + 5 + 6
    assert trainer.calls == ["begin", "end"]
    assert contexts and contexts[0].num_replicas_in_sync == 1
    trainer.train_dataset = tf.data.Dataset.range(1, 3, output_type=tf.float32).batch(2)  # Restarts the input.
    assert float(trainer.train(5)["total"]) == 21 + 3 and trainer.last_loop_num_steps == 1


def test_trainer_rejects_unsupported_datasets_and_options():
    with pytest.raises(TypeError, match="`train_dataset` must be a tf.data.Dataset"):
        SumTrainer([1, 2, 3])
    with pytest.raises(TypeError, match="`options` must be a StandardTrainerOptions"):
        SumTrainer(tf.data.Dataset.range(3), options=tfm.StandardEvaluatorOptions())


class MeanEvaluator(tfm.StandardEvaluator):
    """Evaluates the mean of its inputs with a (sum, count) state."""

    def eval_begin(self):
        return tf.constant(0.0), tf.constant(0.0)

    def eval_step(self, iterator):
        batch = next(iterator)
        return tf.reduce_sum(batch), tf.cast(tf.size(batch), tf.float32)

    def eval_reduce(self, state=None, step_outputs=None):
        return state[0] + step_outputs[0], state[1] + step_outputs[1]

    def eval_end(self, state):
        return {"mean": float(state[0] / state[1]), "count": float(state[1])}


@pytest.mark.parametrize("use_tf_while_loop", [False, True])
def test_evaluator_folds_state_and_restarts_its_input(use_tf_while_loop):
    data = tf.data.Dataset.range(10, output_type=tf.float32).batch(4)  # [0..3], [4..7], [8, 9]
    options = tfm.StandardEvaluatorOptions(use_tf_while_loop=use_tf_while_loop)
    evaluator = MeanEvaluator(data, options)
    assert evaluator.evaluate(-1) == {"mean": 4.5, "count": 10.0}
    assert evaluator.evaluate(1) == {"mean": 1.5, "count": 4.0}  # Restarted from the beginning.
    assert evaluator.last_eval_num_steps == 1
    continuing = MeanEvaluator(data, dataclasses.replace(options, recreate_iterator_for_each_eval=False))
    continuing.evaluate(1)
    assert continuing.evaluate(-1) == {"mean": 6.5, "count": 6.0}  # [4..7], [8, 9]


def test_keras_evaluator_matches_model_evaluate():
    model = make_model()
    data = tf.data.Dataset.from_tensor_slices((X, Y)).batch(10)  # A last, partial batch of 8.
    expected = model.evaluate(data, verbose=0, return_dict=True)
    evaluator = tfm.KerasModelEvaluator(model, data, strategy=tf.distribute.get_strategy())
    results = evaluator.evaluate(-1)
    assert evaluator.last_eval_num_steps == 5
    assert results == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize(
    "make, error, message",
    [
        (
            lambda: tfm.StandardTrainerOptions(use_tf_function=False),
            ValueError,
            "`use_tf_while_loop=True` requires `use_tf_function=True`",
        ),
        (
            lambda: tfm.StandardEvaluatorOptions(use_tf_function=False, use_tf_while_loop=True),
            ValueError,
            "`use_tf_while_loop=True` requires `use_tf_function=True`",
        ),
        (lambda: tfm.StandardTrainerOptions(use_tf_function=1), TypeError, "`use_tf_function` must be a bool, got 1"),
        (
            lambda: tfm.StandardEvaluatorOptions(recreate_iterator_for_each_eval="yes"),
            TypeError,
            "`recreate_iterator_for_each_eval` must be a bool, got 'yes'",
        ),
    ],
)
def test_options_are_validated(make, error, message):
    with pytest.raises(error) as raised:
        make()
    assert message in str(raised.value)


def test_options_are_frozen():
    options = tfm.StandardTrainerOptions()
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.use_tf_while_loop = False  # type: ignore[misc]


def test_keras_trainer_rejects_uncompiled_models_and_foreign_strategies(two_cpus):
    uncompiled = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    with pytest.raises(ValueError, match="compile `model` first"):
        tfm.KerasModelTrainer(uncompiled, dataset(), strategy=tf.distribute.get_strategy())
    mirrored = tfm.make_strategy("mirrored", devices=two_cpus)
    with pytest.raises(ValueError, match="build and compile the model inside `strategy.scope\\(\\)`"):
        tfm.KerasModelTrainer(make_model(), dataset(), strategy=mirrored)
