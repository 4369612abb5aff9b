"""A TPUEstimator whose host_call writes the training scalars, as TensorFlow's TPU ResNet and
EfficientNet do: `tf.summary.create_file_writer(model_dir, max_queue=iterations_per_loop)`,
`record_if(True)`, one scalar per tensor at the step it was passed, the tensors reshaped to a batch
axis. `iterations_per_loop=3`, trained in two calls. Reports every scalar event the host_call wrote
(step, tag, value) and the numbers."""
import glob

import numpy as np
import tensorflow as tf

MODEL_DIR = "model_host_call"
rng = np.random.RandomState(11)
X = rng.randn(40, 3).astype(np.float32)
Y = (X[:, 0] * 2 - X[:, 2] > 0).astype(np.int32)


def report(values):
    print("eval_results", repr({k: float(v) for k, v in sorted(values.items())}))


def input_fn(params):
    return tf.data.Dataset.from_tensor_slices((X, Y)).repeat().batch(params["batch_size"], drop_remainder=True)


def model_fn(features, labels, mode, params):
    logits = tf.compat.v1.layers.dense(features, 2, kernel_initializer=tf.compat.v1.constant_initializer(0.1))
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    step = tf.compat.v1.train.get_global_step()
    learning_rate = tf.compat.v1.train.exponential_decay(0.4, step, 2, 0.8)
    train_op = tf.compat.v1.train.GradientDescentOptimizer(learning_rate).minimize(loss, global_step=step)

    def host_call_fn(gs, loss, lr):
        gs = gs[0]
        with tf.summary.create_file_writer(MODEL_DIR, max_queue=params["iterations_per_loop"]).as_default():
            with tf.summary.record_if(True):
                tf.summary.scalar("train_loss", loss[0], step=gs)
                tf.summary.scalar("learning_rate", lr[0], step=gs)
            return tf.compat.v1.summary.all_v2_summary_ops()

    host_call = (host_call_fn, [tf.reshape(step, [1]), tf.reshape(loss, [1]), tf.reshape(learning_rate, [1])])
    return tf.compat.v1.estimator.tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op, host_call=host_call)


config = tf.compat.v1.estimator.tpu.RunConfig(
    model_dir=MODEL_DIR, save_checkpoints_steps=100, save_summary_steps=100,
    tpu_config=tf.compat.v1.estimator.tpu.TPUConfig(iterations_per_loop=3))
est = tf.compat.v1.estimator.tpu.TPUEstimator(
    model_fn=model_fn, config=config, use_tpu=False, train_batch_size=8, params={"iterations_per_loop": 3})
est.train(input_fn, max_steps=4)
est.train(input_fn, max_steps=7)
report({"kernel_sum": est.get_variable_value("dense/kernel").sum(), "step": est.get_variable_value("global_step")})
written = []
for path in sorted(glob.glob(MODEL_DIR + "/events.out.tfevents.*")):
    for event in tf.compat.v1.train.summary_iterator(path):
        for value in event.summary.value:
            if value.tag in ("train_loss", "learning_rate"):
                written.append((event.step, value.tag, float(tf.make_ndarray(value.tensor))))
for step, tag, number in sorted(written):
    report({"step": step, tag: number})
report({"events": len(written)})
