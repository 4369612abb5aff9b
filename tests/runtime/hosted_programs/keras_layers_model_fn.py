"""A model_fn built from `tf.keras.layers` (TF 1.13+ style; Keras 2 then, Keras 3 now) in a loop
over `params['hidden_units']`: trained, evaluated from the checkpoint twice, then predicted. Keras 2
named the layers afresh in each graph (`dense`, `dense_1`, ...), so the eval graph restored what
training saved; `get_variable_value` reads a variable by that name."""
import numpy as np
import tensorflow as tf

rng = np.random.RandomState(4)
X = rng.randn(64, 4).astype(np.float32)
Y = (X[:, 0] - X[:, 3] > 0).astype(np.int32)


def report(values):
    print("eval_results", repr({k: float(v) for k, v in sorted(values.items())}))


def input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).repeat().batch(8)


def eval_input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(16)


def model_fn(features, labels, mode, params):
    net = features["x"]
    for units in params["hidden_units"]:
        net = tf.keras.layers.Dense(units, activation="relu", kernel_initializer=tf.keras.initializers.Constant(0.2))(net)
    logits = tf.keras.layers.Dense(2, kernel_initializer=tf.keras.initializers.Constant(-0.1))(net)
    if mode == tf.compat.v1.estimator.ModeKeys.PREDICT:
        return tf.compat.v1.estimator.EstimatorSpec(mode, predictions={"logits": logits})
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    metrics = {"accuracy": tf.compat.v1.metrics.accuracy(labels, tf.argmax(logits, 1))}
    optimizer = tf.compat.v1.train.GradientDescentOptimizer(0.3)
    train_op = optimizer.minimize(loss, global_step=tf.compat.v1.train.get_global_step())
    return tf.compat.v1.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops=metrics)


est = tf.compat.v1.estimator.Estimator(model_fn, model_dir="model_keras", params={"hidden_units": [5, 3]})
for steps in (4, 8):
    est.train(input_fn, max_steps=steps)
    report(est.evaluate(eval_input_fn))
preds = list(est.predict(lambda: tf.data.Dataset.from_tensor_slices({"x": X[:3]}).batch(2)))
report({"n": len(preds), "l0": preds[0]["logits"][0], "l2": preds[2]["logits"][1]})
report({"bias": est.get_variable_value("dense_2/bias").sum()})
