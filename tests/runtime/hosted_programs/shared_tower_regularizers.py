"""A siamese model_fn: one `tf.compat.v1.layers.dense` tower, weight- and bias-regularized, built
under `variable_scope("tower")` and called again on a second input with `reuse=True`; the loss adds
`tf.compat.v1.losses.get_regularization_loss()`. TF 1.x added a weight's penalty where its graph
made the weight, once per build: the reused tower adds none. Trains, evaluates twice (the
regularization sum is an eval metric too), predicts."""
import numpy as np
import tensorflow as tf

rng = np.random.RandomState(12)
LEFT = rng.randn(64, 4).astype(np.float32)
RIGHT = rng.randn(64, 4).astype(np.float32)
Y = (LEFT[:, 0] * RIGHT[:, 0] > 0).astype(np.float32).reshape(-1, 1)


def report(values):
    print("eval_results", repr({k: float(v) for k, v in sorted(values.items())}))


def input_fn(repeat):
    dataset = tf.data.Dataset.from_tensor_slices(({"left": LEFT, "right": RIGHT}, Y))
    return (dataset.repeat() if repeat else dataset).batch(16)


def tower(x, reuse):
    with tf.compat.v1.variable_scope("tower", reuse=reuse):
        hidden = tf.compat.v1.layers.dense(
            x, 5, activation=tf.tanh, kernel_initializer=tf.compat.v1.constant_initializer(np.linspace(-0.6, 0.6, 20).reshape(4, 5)),
            bias_initializer=tf.compat.v1.constant_initializer(0.1), kernel_regularizer=lambda w: 0.05 * tf.nn.l2_loss(w),
            bias_regularizer=lambda b: 0.5 * tf.reduce_sum(tf.abs(b)), name="hidden")
        return hidden


def model_fn(features, labels, mode, params):
    left = tower(features["left"], reuse=False)
    right = tower(features["right"], reuse=True)
    logits = tf.compat.v1.layers.dense(left * right, 1, kernel_initializer=tf.compat.v1.constant_initializer(0.3))
    if mode == tf.compat.v1.estimator.ModeKeys.PREDICT:
        return tf.compat.v1.estimator.EstimatorSpec(mode, predictions={"logit": logits})
    regularization = tf.compat.v1.losses.get_regularization_loss()
    loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)) + regularization
    if mode == tf.compat.v1.estimator.ModeKeys.EVAL:
        return tf.compat.v1.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops={
            "regularization": tf.compat.v1.metrics.mean(regularization)})
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.3).minimize(loss, tf.compat.v1.train.get_global_step())
    return tf.compat.v1.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


estimator = tf.compat.v1.estimator.Estimator(model_fn, model_dir="model_siamese")
for _ in range(2):
    estimator.train(lambda: input_fn(True), steps=6)
    report(estimator.evaluate(lambda: input_fn(False)))
report({"logits": sum(float(p["logit"][0]) for p in estimator.predict(lambda: input_fn(False)))})
