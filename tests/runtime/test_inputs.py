"""input_fn_data: TF1 signature inspection, params['batch_size'] per input mode, dataset checks."""

from __future__ import annotations

import functools

import keras
import numpy as np
import pytest
import tensorflow as tf

import tfmigrate.runtime as tfm
from tfmigrate.runtime import InputFnData, ModeKeys, input_fn_data

pytestmark = pytest.mark.tf


def _dataset(batch_size=2):
    x = np.arange(32, dtype="float32").reshape(16, 2)
    return tf.data.Dataset.from_tensor_slices((x, x[:, :1])).batch(batch_size, drop_remainder=True)


def test_input_fn_without_arguments():
    data = input_fn_data(lambda: _dataset(), batch_size=8)
    assert isinstance(data(), tf.data.Dataset)


def test_only_named_arguments_are_passed():
    seen = {}

    def params_only(params):
        seen["params_only"] = params
        return _dataset()

    def mode_params(mode, params):
        seen["mode_params"] = (mode, params)
        return _dataset()

    def everything(params, mode, config):
        seen["everything"] = (params, mode, config)
        return _dataset()

    def keyword_only(*, config, mode):
        seen["keyword_only"] = (config, mode)
        return _dataset()

    def var_keywords(**kwargs):  # TF1's fn_args did not see through **kwargs either.
        seen["var_keywords"] = kwargs
        return _dataset()

    config = tfm.RunConfig(model_dir="/tmp/m")
    for fn in (params_only, mode_params, everything, keyword_only, var_keywords):
        input_fn_data(fn, batch_size=8, params={"k": 1}, mode="eval", config=config)()
    assert seen["params_only"] == {"k": 1, "batch_size": 8}
    assert seen["mode_params"] == ("eval", {"k": 1, "batch_size": 8})
    assert seen["everything"] == ({"k": 1, "batch_size": 8}, "eval", config)
    assert seen["keyword_only"] == (config, "eval")
    assert seen["var_keywords"] == {}


def test_partial_bound_params_are_not_passed_again():
    def fn(data_dir, params):
        return _dataset(params["batch_size"] if isinstance(params, dict) else 1)

    bound = functools.partial(fn, "/data", params={"batch_size": 3})
    assert input_fn_data(bound, batch_size=8)().element_spec[0].shape[0] == 3


def test_params_are_copied_and_use_tpu_added_only_when_given():
    params = {"lr": 0.1}
    captured = []

    def fn(params):
        captured.append(params)
        params["mutated"] = True
        return _dataset()

    input_fn_data(fn, batch_size=4, params=params, use_tpu=False)()
    input_fn_data(fn, batch_size=None, params=params)()
    assert params == {"lr": 0.1}
    assert captured[0] == {"lr": 0.1, "batch_size": 4, "use_tpu": False, "mutated": True}
    assert captured[1] == {"lr": 0.1, "mutated": True}  # A plain Estimator gets its params only.


@pytest.mark.parametrize("mode, expected", [("train", "train"), ("eval", "eval"), ("infer", "infer"), ("predict", "infer")])
def test_modes_are_tf1_mode_keys(mode, expected):
    assert input_fn_data(lambda: _dataset(), batch_size=1, mode=mode).mode == expected
    assert ModeKeys.PREDICT == "infer" and ModeKeys.TRAIN == "train" and ModeKeys.EVAL == "eval"


def test_bad_arguments():
    with pytest.raises(ValueError, match="mode"):
        input_fn_data(lambda: _dataset(), batch_size=1, mode="training")
    with pytest.raises(ValueError, match="batch_size"):
        input_fn_data(lambda: _dataset(), batch_size=0)
    with pytest.raises(TypeError, match="params"):
        input_fn_data(lambda: _dataset(), batch_size=1, params=[1])
    with pytest.raises(TypeError, match="input_fn"):
        input_fn_data("not callable", batch_size=1)


def test_batch_size_per_input_context():
    def context(pipelines, replicas):
        return tf.distribute.InputContext(num_input_pipelines=pipelines, input_pipeline_id=0, num_replicas_in_sync=replicas)

    host = input_fn_data(lambda: _dataset(), batch_size=32)
    replica = input_fn_data(lambda: _dataset(), batch_size=32, per_replica=True)
    assert host.call_params(context(1, 8))["batch_size"] == 32  # PER_HOST_V1 on one host: G.
    assert host.call_params(context(2, 8))["batch_size"] == 16  # G / hosts.
    assert replica.call_params(context(1, 8))["batch_size"] == 4  # PER_HOST_V2: G / replicas.
    assert replica.call_params(context(2, 8))["batch_size"] == 4
    with pytest.raises(ValueError):
        input_fn_data(lambda: _dataset(), batch_size=30, per_replica=True).call_params(context(1, 8))


def test_input_fn_returning_iterator_tensors_gives_the_same_batches():
    # TF1's `make_one_shot_iterator().get_next()` input_fn: Estimator took one batch per session
    # run; the runtime runs it in a graph of its own and yields those batches, in order, to the end.
    def tf1_style(params):
        features, labels = tf.compat.v1.data.make_one_shot_iterator(_dataset().take(3)).get_next()
        return features, labels

    got = list(input_fn_data(tf1_style, batch_size=2)())
    want = list(_dataset().take(3))
    assert len(got) == len(want) == 3
    for (gx, gy), (wx, wy) in zip(got, want):
        np.testing.assert_array_equal(gx, wx)
        np.testing.assert_array_equal(gy, wy)


def test_iterator_input_fn_shuffles_the_same_every_run_under_tf_random_seed():
    # Estimator's graph had the RunConfig's graph seed, so an unseeded `shuffle` in such an input_fn
    # drew the same order every run; the input_fn's own graph gets that seed too.
    def shuffled(params):
        dataset = tf.data.Dataset.range(64).shuffle(64).batch(8)
        return tf.compat.v1.data.make_one_shot_iterator(dataset).get_next()

    def order(config):
        return np.concatenate([batch.numpy() for batch in input_fn_data(shuffled, batch_size=8, config=config)()])

    seeded = tfm.RunConfig(tf_random_seed=5)
    first, second = order(seeded), order(seeded)
    np.testing.assert_array_equal(first, second)
    assert sorted(first) == list(range(64)) and list(first) != list(range(64))


def test_input_fn_returning_something_else_raises():
    with pytest.raises(TypeError, match=r"returned int, not a tf.data.Dataset or \(features, labels\) tensors"):
        input_fn_data(lambda: 3, batch_size=2)()
    with pytest.raises(TypeError, match=r"returned NoneType, not a tf.data.Dataset"):
        input_fn_data(lambda: None, batch_size=2)()


@pytest.mark.parametrize("per_replica, expected_batch", [(False, 8), (True, 4)])
def test_batch_size_seen_under_two_replica_mirrored(two_cpus, per_replica, expected_batch):
    """G=8 on 2 replicas: the input_fn builds 8 (Keras splits 4+4) or 4 (each replica gets whole elements)."""
    strategy = tfm.make_strategy("mirrored", devices=two_cpus)
    seen = []

    def input_fn(params):
        seen.append(params["batch_size"])
        return _dataset(params["batch_size"]).repeat()

    with strategy.scope():
        model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
        model.compile(optimizer="sgd", loss="mse")
    data = input_fn_data(input_fn, batch_size=8, per_replica=per_replica)
    assert isinstance(data, InputFnData) and data.per_replica is per_replica
    tfm.fit(model, data, steps=2)
    assert seen and set(seen) == {expected_batch}
    assert int(model.optimizer.iterations.numpy()) == 2


def test_numpy_input_fn_returns_tensors_as_tf1s_did_and_the_runtime_reads_its_dataset():
    # TF 1.x's numpy_input_fn returned its queue's tensors: programs unpack and index them. The
    # runtime's returns a one-shot iterator's next batch, and gives the dataset as `dataset_fn`.
    x = {"a": np.arange(10, dtype=np.float32).reshape(5, 2)}
    y = np.arange(5, dtype=np.int64)
    input_fn = tfm.estimator.inputs.numpy_input_fn(x, y, batch_size=2, num_epochs=2, shuffle=False)
    features, labels = input_fn()
    np.testing.assert_array_equal(features["a"], x["a"][:2])
    np.testing.assert_array_equal(labels, y[:2])
    from tfmigrate.runtime.inputs import dataset_form

    batches = [labels.numpy().tolist() for _, labels in dataset_form(input_fn)()]
    assert batches == [[0, 1], [2, 3], [4, 0], [1, 2], [3, 4]]  # TF1's batches run on across epochs
    with tf.Graph().as_default():
        forever = tfm.estimator.inputs.numpy_input_fn(x["a"], batch_size=3, num_epochs=None, shuffle=False)()
        assert forever.shape.as_list() == [3, 2]  # TF1's dequeue_many: every batch full, its size static
        with tf.compat.v1.Session() as session:
            rows = [session.run(forever)[:, 0].tolist() for _ in range(3)]
    assert rows == [[0, 2, 4], [6, 8, 0], [2, 4, 6]]


def test_input_fns_returning_iterator_tensors_are_read_without_a_session(monkeypatch):
    # A program's input_fn that transforms a one-shot iterator's tensors (here numpy_input_fn's)
    # becomes the iterator's dataset mapped by those ops, in TF2: no Session reads it.
    x = np.arange(12, dtype=np.float32).reshape(6, 2)
    y = np.arange(6, dtype=np.float32)

    def scaled(params):
        features, labels = tfm.estimator.inputs.numpy_input_fn({"x": x}, y, batch_size=4, num_epochs=1, shuffle=False)()
        return {"x": features["x"] * 2.0}, labels + 1.0

    from tensorflow.python.client import session

    def no_session(*args, **kwargs):
        raise AssertionError("a Session was opened")

    monkeypatch.setattr(session.BaseSession, "__init__", no_session)
    got = [(f["x"].numpy(), l.numpy()) for f, l in input_fn_data(scaled, batch_size=4)()]
    assert len(got) == 2
    np.testing.assert_array_equal(got[0][0], x[:4] * 2.0)
    np.testing.assert_array_equal(got[1][1], y[4:] + 1.0)


def test_input_fns_returning_tensors_their_ops_make_run_those_ops_for_each_batch(monkeypatch):
    # Constants and fake data drawn by random ops, with no dataset: each batch runs the ops
    # again, as each TF 1.x session run did, drawing what a graph with the same seed draws.
    def fake(params):
        x = tf.random.uniform([4, 2], seed=3)
        return {"x": x, "ones": tf.ones([4, 1])}, tf.reduce_sum(x, axis=1)

    with tf.Graph().as_default():
        tf.compat.v1.set_random_seed(5)
        features, labels = fake(None)
        with tf.compat.v1.Session() as session:
            expected = [session.run(features["x"]) for _ in range(3)]
    from tensorflow.python.client import session

    def no_session(*args, **kwargs):
        raise AssertionError("a Session was opened")

    monkeypatch.setattr(session.BaseSession, "__init__", no_session)
    config = tfm.estimator.RunConfig(tf_random_seed=5)
    batches = list(input_fn_data(fake, batch_size=None, config=config)().take(3))
    for (features, labels), want in zip(batches, expected):
        np.testing.assert_array_equal(features["x"].numpy(), want)
        np.testing.assert_array_equal(features["ones"].numpy(), np.ones([4, 1]))
        np.testing.assert_allclose(labels.numpy(), want.sum(axis=1), rtol=1e-6)
    monkeypatch.undo()

    # Tensors that read state (a variable here, as `limit_epochs` counts in one) are read
    # through a Session, as before: running their ops per batch would not give TF 1.x's values.
    def counted(params):
        count = tf.compat.v1.get_local_variable("count", initializer=0)
        return {"x": tf.cast(tf.reshape(count.assign_add(1), [1, 1]), tf.float32)}, tf.zeros([1])

    assert [f["x"].numpy().item() for f, _ in input_fn_data(counted, batch_size=None)().take(3)] == [1.0, 2.0, 3.0]


def test_pandas_input_fn_gives_tf1s_columns_targets_and_batches():
    import pandas as pd
    frame = pd.DataFrame({"n": np.arange(5, dtype=np.int64), "s": list("abcde")})
    target = pd.Series(np.arange(5, dtype=np.float32) / 10)
    input_fn = tfm.estimator.inputs.pandas_input_fn(frame, target, batch_size=2, num_epochs=2, shuffle=False)
    frame.loc[0, "n"] = 99  # TF1 copied the DataFrame when the input_fn was made
    features, labels = input_fn()
    assert sorted(features) == ["n", "s"] and features["s"].dtype == tf.string
    np.testing.assert_array_equal(features["n"], [0, 1])
    np.testing.assert_allclose(labels, [0.0, 0.1])
    from tfmigrate.runtime.inputs import dataset_form

    assert [f["n"].numpy().tolist() for f, _ in dataset_form(input_fn)()] == [[0, 1], [2, 3], [4, 0], [1, 2], [3, 4]]
    targets = pd.DataFrame({"a": np.ones(5), "b": np.zeros(5)})
    _, both = tfm.estimator.inputs.pandas_input_fn(frame, targets, batch_size=5, shuffle=False)()
    assert sorted(both) == ["a", "b"]
    alone = tfm.estimator.inputs.pandas_input_fn(frame, batch_size=5, shuffle=False)()
    assert sorted(alone) == ["n", "s"]
    with pytest.raises(ValueError, match="shuffle must be provided"):
        tfm.estimator.inputs.pandas_input_fn(frame, target)
    with pytest.raises(ValueError, match="Index for x and y are mismatched"):
        tfm.estimator.inputs.pandas_input_fn(frame, target[1:], shuffle=False)
    with pytest.raises(ValueError, match="Cannot use name n for target column"):
        tfm.estimator.inputs.pandas_input_fn(frame, target, shuffle=False, target_column="n")
