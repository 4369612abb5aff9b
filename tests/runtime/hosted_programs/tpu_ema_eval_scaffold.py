"""EfficientNet's and ResNet's exponential moving average, as tensorflow/tpu's trainers wrote it:
training applies `ExponentialMovingAverage` to the trainable variables after each step, and
evaluation (and prediction) restores the averages into the model's variables through a
`scaffold_fn` returning `Scaffold(saver=Saver(ema.variables_to_restore()))`. As EfficientNet's
`get_ema_vars`, the averaged variables are the trainable ones plus the batch norm statistics read
off `global_variables()` (each train() call's graph had no averages yet). Reports the evaluation
of the averaged weights and one prediction, after two rounds of training."""
import numpy as np
import tensorflow as tf

rng = np.random.RandomState(7)
X = rng.randn(64, 5).astype(np.float32)
Y = (X[:, 0] - X[:, 2] > 0).astype(np.int32)
DECAY = 0.8


def input_fn(params):
    return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).repeat().batch(params["batch_size"], drop_remainder=True)


def model_fn(features, labels, mode, params):
    training = mode == tf.compat.v1.estimator.ModeKeys.TRAIN
    hidden = tf.compat.v1.layers.dense(features["x"], 8, activation=tf.nn.tanh, name="hidden",
                                       kernel_initializer=tf.compat.v1.constant_initializer(0.2))
    hidden = tf.compat.v1.layers.batch_normalization(hidden, training=training, name="bn")
    if training:  # (random: each train() call traces afresh, as TF1 built each call's graph)
        hidden = tf.nn.dropout(hidden, rate=0.25)
    logits = tf.compat.v1.layers.dense(hidden, 2, name="logits", kernel_initializer=tf.compat.v1.constant_initializer(-0.1))
    ema = tf.compat.v1.train.ExponentialMovingAverage(decay=DECAY, num_updates=tf.compat.v1.train.get_global_step())
    ema_vars = tf.compat.v1.trainable_variables() + [
        v for v in tf.compat.v1.global_variables() if "moving_mean" in v.name or "moving_variance" in v.name]
    if mode == tf.compat.v1.estimator.ModeKeys.PREDICT:
        def predict_scaffold():
            return tf.compat.v1.train.Scaffold(saver=tf.compat.v1.train.Saver(ema.variables_to_restore(ema_vars)))
        return tf.compat.v1.estimator.tpu.TPUEstimatorSpec(
            mode, predictions={"probabilities": tf.nn.softmax(logits)}, scaffold_fn=predict_scaffold)
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    if training:
        optimizer = tf.compat.v1.train.GradientDescentOptimizer(0.5)
        with tf.control_dependencies(tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.UPDATE_OPS)):
            train_op = optimizer.minimize(loss, global_step=tf.compat.v1.train.get_global_step())
        with tf.control_dependencies([train_op]):
            train_op = ema.apply(ema_vars)
        return tf.compat.v1.estimator.tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)

    def metric_fn(labels, logits):
        return {"accuracy": tf.compat.v1.metrics.accuracy(labels, tf.argmax(logits, -1)),
                "mean_logit": tf.compat.v1.metrics.mean(logits)}

    def eval_scaffold():
        return tf.compat.v1.train.Scaffold(saver=tf.compat.v1.train.Saver(ema.variables_to_restore(ema_vars)))

    return tf.compat.v1.estimator.tpu.TPUEstimatorSpec(
        mode, loss=loss, eval_metrics=(metric_fn, [labels, logits]), scaffold_fn=eval_scaffold)


def main():
    config = tf.compat.v1.estimator.tpu.RunConfig(
        model_dir="ema_eval", save_checkpoints_steps=5, tf_random_seed=5, tpu_config=tf.compat.v1.estimator.tpu.TPUConfig(iterations_per_loop=2))
    estimator = tf.compat.v1.estimator.tpu.TPUEstimator(
        model_fn, config=config, use_tpu=False, train_batch_size=8, eval_batch_size=8, predict_batch_size=4)
    for max_steps in (5, 10):
        estimator.train(input_fn, max_steps=max_steps)
        results = estimator.evaluate(input_fn, steps=4)
        print("eval_results", repr({k: float(v) for k, v in sorted(results.items())}))
    first = next(iter(estimator.predict(lambda params: input_fn(params).take(1))))
    print("eval_results", repr({"p0": float(first["probabilities"][0])}))


if __name__ == "__main__":
    main()
