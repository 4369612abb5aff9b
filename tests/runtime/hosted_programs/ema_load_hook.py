"""tensorflow/tpu's MobileNet, Inception and AmoebaNet evaluate their moving averages through a
`LoadEMAHook` passed to `evaluate(hooks=...)` (and `predict`): its `begin()` builds a Saver over
`ExponentialMovingAverage.variables_to_restore()` and its `after_create_session` restores the
latest checkpoint's averages into the model's variables, after Estimator restored the checkpoint
itself. Training applies the average after each step. Reports two evaluations with the hook, one
without it (the raw weights), and a prediction with it."""
import numpy as np
import tensorflow as tf

rng = np.random.RandomState(11)
X = rng.randn(48, 4).astype(np.float32)
Y = (X[:, 1] + X[:, 3] > 0).astype(np.int32)
DECAY = 0.7
MODEL_DIR = "ema_hook"


class LoadEMAHook(tf.compat.v1.train.SessionRunHook):
    def __init__(self, model_dir):
        super().__init__()
        self._model_dir = model_dir

    def begin(self):
        ema = tf.compat.v1.train.ExponentialMovingAverage(DECAY)
        self._saver = tf.compat.v1.train.Saver(ema.variables_to_restore())
        self._checkpoint = tf.train.latest_checkpoint(self._model_dir)

    def after_create_session(self, sess, coord):
        self._saver.restore(sess, self._checkpoint)


def input_fn(params):
    return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).repeat().batch(params["batch_size"], drop_remainder=True)


def model_fn(features, labels, mode, params):
    hidden = tf.compat.v1.layers.dense(features["x"], 6, activation=tf.nn.relu, name="hidden",
                                       kernel_initializer=tf.compat.v1.constant_initializer(0.3))
    logits = tf.compat.v1.layers.dense(hidden, 2, name="logits", kernel_initializer=tf.compat.v1.constant_initializer(-0.2))
    if mode == tf.compat.v1.estimator.ModeKeys.PREDICT:
        return tf.compat.v1.estimator.tpu.TPUEstimatorSpec(mode, predictions={"probabilities": tf.nn.softmax(logits)})
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    if mode == tf.compat.v1.estimator.ModeKeys.TRAIN:
        ema = tf.compat.v1.train.ExponentialMovingAverage(decay=DECAY)
        optimizer = tf.compat.v1.train.MomentumOptimizer(0.3, 0.9)
        train_op = optimizer.minimize(loss, global_step=tf.compat.v1.train.get_global_step())
        with tf.control_dependencies([train_op]):
            train_op = ema.apply(tf.compat.v1.trainable_variables())
        return tf.compat.v1.estimator.tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)

    def metric_fn(labels, logits):
        return {"accuracy": tf.compat.v1.metrics.accuracy(labels, tf.argmax(logits, -1)),
                "mean_logit": tf.compat.v1.metrics.mean(logits)}

    return tf.compat.v1.estimator.tpu.TPUEstimatorSpec(mode, loss=loss, eval_metrics=(metric_fn, [labels, logits]))


def main():
    config = tf.compat.v1.estimator.tpu.RunConfig(
        model_dir=MODEL_DIR, tf_random_seed=3, tpu_config=tf.compat.v1.estimator.tpu.TPUConfig(iterations_per_loop=3))
    estimator = tf.compat.v1.estimator.tpu.TPUEstimator(
        model_fn, config=config, use_tpu=False, train_batch_size=8, eval_batch_size=8, predict_batch_size=4)
    for max_steps in (6, 12):
        estimator.train(input_fn, max_steps=max_steps)
        results = estimator.evaluate(input_fn, steps=3, hooks=[LoadEMAHook(MODEL_DIR)])
        print("eval_results", repr({k: float(v) for k, v in sorted(results.items())}))
    raw = estimator.evaluate(input_fn, steps=3, name="raw")
    print("eval_results", repr({"raw_" + k: float(v) for k, v in sorted(raw.items())}))
    first = next(iter(estimator.predict(lambda params: input_fn(params).take(1), hooks=[LoadEMAHook(MODEL_DIR)])))
    print("eval_results", repr({"p0": float(first["probabilities"][0])}))


if __name__ == "__main__":
    main()
