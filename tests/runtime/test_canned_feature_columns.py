"""runtime.canned's optimizer conversion and feature-column layers in TF1 checkpoints (real TF)."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

import tfmigrate.runtime as tfm
from tfmigrate.runtime import canned
from tfmigrate.runtime.tf1_checkpoint import load_tf1_checkpoint, tf1_variable_names

pytestmark = pytest.mark.tf


def test_v2_keras_adagrad_instance_steps_like_keras2_adagrad():
    """A v2 canned estimator given `tf.keras.optimizers.legacy.Adagrad(0.05)` (migrated to Keras 3's
    Adagrad with a float rate) trains with Keras 2's update: epsilon outside the square root."""
    optimizer = canned.get_optimizer(tf.keras.optimizers.Adagrad(learning_rate=0.05), None, "v2")
    assert isinstance(optimizer, canned.LegacyAdagrad)
    variable = tf.Variable([1.0, -2.0])
    gradient = np.array([0.5, 3.0], np.float32)
    optimizer.apply_gradients([(tf.constant(gradient), variable)])
    accumulator = 0.1 + gradient**2
    expected = np.array([1.0, -2.0], np.float32) - 0.05 * gradient / (np.sqrt(accumulator) + 1e-7)
    np.testing.assert_allclose(variable.numpy(), expected, rtol=1e-6)


def test_v2_keras_adagrad_instance_keeps_a_schedule():
    schedule = tf.keras.optimizers.schedules.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5)
    optimizer = canned.get_optimizer(tf.keras.optimizers.Adagrad(learning_rate=schedule), None, "v2")
    assert isinstance(optimizer, canned.LegacyAdagrad)
    assert optimizer._learning_rate is schedule  # noqa: SLF001


class _ColumnsModel(tf.keras.Model):
    """What TFM201 builds from a model_fn calling `input_layer` and `linear_model`."""

    def __init__(self, deep, wide):
        super().__init__()
        self.input_layer = tfm.feature_columns.InputLayer(feature_columns=deep)
        self.dense = tf.keras.layers.Dense(units=1)
        self.linear_model = tfm.feature_columns.LinearModel(feature_columns=wide, units=1)

    def call(self, features, training=False):
        return self.dense(self.input_layer(features)) + self.linear_model(features)


def _columns():
    city = tfm.feature_columns.categorical_column_with_vocabulary_list("city", ["oslo", "rome", "lima"])
    deep = [tfm.feature_columns.numeric_column("x"), tfm.feature_columns.embedding_column(city, dimension=2)]
    return deep, [city]


def test_feature_column_layers_carry_tf1_names_into_checkpoints(tmp_path):
    """`input_layer/<col>_embedding/embedding_weights`, `linear_model/<col>/weights` and
    `linear_model/bias_weights` (TF1's names in a model_fn) are restored from a TF1 checkpoint."""
    model = _ColumnsModel(*_columns())
    features = {"x": tf.constant([[1.0], [2.0]]), "city": tf.constant([["rome"], ["lima"]])}
    model(features)
    names = tf1_variable_names(model)
    assert names["input_layer/city_embedding/embedding_weights"] is model.input_layer.tf1_names["city_embedding/embedding_weights"]
    assert {"dense/kernel", "dense/bias", "linear_model/city/weights", "linear_model/bias_weights"} <= set(names)

    values = {
        "input_layer/city_embedding/embedding_weights": np.arange(6, dtype=np.float32).reshape(3, 2),
        "dense/kernel": np.array([[0.5], [1.0], [-1.0]], np.float32),
        "dense/bias": np.array([0.25], np.float32),
        "linear_model/city/weights": np.array([[1.0], [2.0], [3.0]], np.float32),
        "linear_model/bias_weights": np.array([-0.5], np.float32),
    }
    with tf.Graph().as_default():
        for name, value in values.items():
            tf.compat.v1.get_variable(name, initializer=value)
        saver = tf.compat.v1.train.Saver()
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            saver.save(session, str(tmp_path / "model.ckpt"))
    load_tf1_checkpoint(model, str(tmp_path / "model.ckpt"), include_optimizer=False)
    # The input layer sorts its columns by name (TF1's order): [city_embedding (2), x]. rome = id 1,
    # lima = id 2: [emb0, emb1, x] . kernel + bias + the city's linear weight + the linear bias.
    expected = [2 * 0.5 + 3 * 1.0 - 1 * 1.0 + 0.25 + 2.0 - 0.5, 4 * 0.5 + 5 * 1.0 - 2 * 1.0 + 0.25 + 3.0 - 0.5]
    np.testing.assert_allclose(model(features).numpy()[:, 0], expected, rtol=1e-6)


def test_v2_rmsprop_name_steps_like_keras2_rmsprop():
    """A v2 canned estimator's 'RMSProp' is Keras 2's RMSprop (default rate 0.001, rho 0.9): epsilon
    added outside the square root of the mean square, which starts at zero."""
    optimizer = canned.get_optimizer("RMSProp", None, "v2")
    assert isinstance(optimizer, canned.LegacyRMSprop)
    variable = tf.Variable([1.0, -2.0, 0.5])
    rms = np.zeros(3, np.float32)
    expected = np.array([1.0, -2.0, 0.5], np.float32)
    for gradient in (np.array([0.5, 3.0, 0.0], np.float32), np.array([-1.0, 0.25, 1e-4], np.float32)):
        optimizer.apply_gradients([(tf.constant(gradient), variable)])
        rms = 0.9 * rms + 0.1 * gradient**2
        expected = expected - 0.001 * gradient / (np.sqrt(rms) + 1e-7)
    np.testing.assert_allclose(variable.numpy(), expected, rtol=1e-6)
    assert canned.get_optimizer("RMSProp", 0.2, "v2").learning_rate.numpy() == pytest.approx(0.2)


def _dropout_model(batch_norm):
    """A DNNRegressor whose one hidden layer of 400 sigmoid units all compute sigmoid(x) and whose
    logits (identity kernel) show each unit: what dropout and batch norm did is visible."""
    model = tfm.canned.DNNRegressor(
        hidden_units=[400], feature_columns=[tfm.feature_columns.numeric_column("x")], label_dimension=400,
        activation_fn=tf.nn.sigmoid, dropout=0.4, batch_norm=batch_norm, api="v1")
    model.hidden[0].kernel.assign(np.ones((1, 400), np.float32))
    model.hidden[0].bias.assign(np.zeros(400, np.float32))
    model.dnn_logits.kernel.assign(np.eye(400, dtype=np.float32))
    model.dnn_logits.bias.assign(np.zeros(400, np.float32))
    return model


def test_dnn_dropout_sits_after_the_activation_at_the_rate_and_only_in_training():
    """TF1's canned DNN (`_DNNModel.call`): hidden layer with its activation, then dropout (training
    only, kept units scaled by 1/(1 - rate)), then batch norm."""
    tf.random.set_seed(11)  # the mask below is one draw: seeded, the test cannot flake
    model = _dropout_model(batch_norm=False)
    features = {"x": tf.constant([[1.0], [1.0], [1.0], [1.0], [1.0]])}
    unit = 1.0 / (1.0 + np.exp(-1.0))
    np.testing.assert_allclose(model(features, training=False).numpy(), np.full((5, 400), unit), rtol=1e-6)
    predicted = model.predict_step((features,))["predictions"].numpy()
    np.testing.assert_allclose(predicted, np.full((5, 400), unit), rtol=1e-6)
    trained = model(features, training=True).numpy()
    kept = trained != 0.0
    # After the activation: a dropped unit is 0 (before it, sigmoid(0) = 0.5), a kept one sigmoid(1)/0.6.
    np.testing.assert_allclose(trained[kept], unit / 0.6, rtol=1e-6)
    assert abs(kept.mean() - 0.6) < 0.066  # 2000 draws: 6 standard deviations (sqrt(0.24 / 2000) = 0.011)
    assert not np.array_equal(kept[0], kept[1])  # A mask per example.


def test_dnn_batch_norm_normalises_the_dropped_out_activations():
    model = _dropout_model(batch_norm=True)
    norm = model.batch_norms[0]
    features = {"x": tf.ones([8, 1])}
    model(features, training=True)
    # Batch norm after dropout: each unit's batch mean is (kept of 8) * sigmoid(1)/0.6 / 8, so the
    # moving mean (0 - (0 - mean) * 0.001) is a multiple of that; after it, every mean would be sigmoid(1).
    unit = 1.0 / (1.0 + np.exp(-1.0))
    counts = norm.moving_mean.numpy() / 0.001 / (unit / 0.6 / 8)
    np.testing.assert_allclose(counts, np.round(counts), atol=1e-3)
    assert len(set(np.round(counts).astype(int))) > 1
    share = np.round(counts) / 8
    batch_variance = share * (1 - share) * (unit / 0.6) ** 2
    np.testing.assert_allclose(norm.moving_variance.numpy(), 1 - (1 - batch_variance) * 0.001, rtol=1e-6)
    evaluated = model(features, training=False).numpy()  # Moving statistics, no dropout: every unit alike.
    np.testing.assert_allclose(evaluated, np.broadcast_to(evaluated[:1], evaluated.shape), rtol=1e-6)


def test_shared_embedding_columns_look_up_one_table_that_both_train():
    """`shared_embedding_columns([title, query])`: one table, named as TF1 named it (the sorted
    column names), read by both columns and given the sum of their gradients."""
    words = ["ant", "bee", "cat"]
    query = tfm.feature_columns.categorical_column_with_vocabulary_list("query", words)
    title = tfm.feature_columns.categorical_column_with_vocabulary_list("title", words)
    shared = tfm.feature_columns.shared_embedding_columns([title, query], dimension=2, combiner="sum")
    layer = tfm.feature_columns.InputLayer(shared, name="input_layer")
    features = {"query": tf.constant([["bee"], ["ant"]]), "title": tf.constant([["cat"], ["ant"]])}
    layer(features)
    assert len(layer.trainable_variables) == 1
    table = layer.tf1_names["query_title_shared_embedding/embedding_weights"]
    assert table is layer.trainable_variables[0] and tuple(table.shape) == (3, 2)
    table.assign(np.arange(6, dtype=np.float32).reshape(3, 2))
    with tf.GradientTape() as tape:
        out = layer(features)
        total = tf.reduce_sum(out)
    # Columns in TF1's order (by name): query, then title.
    np.testing.assert_allclose(out.numpy(), [[2, 3, 4, 5], [0, 1, 0, 1]])
    # ant: both columns of example 2; bee: the query of example 1; cat: the title of example 1.
    np.testing.assert_allclose(tf.convert_to_tensor(tape.gradient(total, table)).numpy(), [[2, 2], [1, 1], [1, 1]])
    model = tfm.canned.DNNClassifier(hidden_units=[2], feature_columns=shared, api="v1")
    names = [n for n in model.tf1_variable_names() if "embedding" in n]
    assert names == ["dnn/input_from_feature_columns/input_layer/query_title_shared_embedding/embedding_weights"]


def test_v2_shared_embeddings_are_a_top_level_table_a_v2_dnn_does_not_train():
    """`tf.feature_column.shared_embeddings`: TF 2.x's table is the variable `<cols>_shared_embedding`
    of the variable scope it is first used in: top-level for a v2 canned DNN (a Keras model), which
    never trained it (no optimizer slot, values kept), `dnn/input_from_feature_columns/` for a v1
    one, which trained it (both measured on TF 2.15)."""
    words = ["ant", "bee", "cat"]
    features = {"query": tf.constant(["bee", "ant"]), "title": tf.constant(["cat", "ant"])}
    labels = tf.constant([[1], [0]])
    # Seeded: an unseeded start can leave all three ReLU units dead on both examples (no kernel
    # gradient at all), which once failed the kernel check in a parallel run.
    tf.keras.utils.set_random_seed(5)
    for api, trained, name in (
        ("v2", False, "query_title_shared_embedding"),
        ("v1", True, "dnn/input_from_feature_columns/query_title_shared_embedding"),
    ):
        query = tfm.feature_columns.categorical_column_with_vocabulary_list("query", words)
        title = tfm.feature_columns.categorical_column_with_vocabulary_list("title", words)
        shared = tfm.feature_columns.shared_embeddings([query, title], dimension=2)
        model = tfm.canned.DNNClassifier(hidden_units=[3], feature_columns=shared, optimizer="SGD", api=api)
        table = model.tf1_variable_names()[name]
        before = table.numpy().copy()
        kernel = model.hidden[0].kernel.numpy().copy()
        model.train_step((features, labels))
        assert not np.array_equal(model.hidden[0].kernel.numpy(), kernel)
        assert (not np.array_equal(table.numpy(), before)) is trained, api
