"""A model_fn that writes its own summaries, as many public trainers did: the learning rate under a
name scope, a histogram of the logits, a batch accuracy, a summary named `loss` in a second
estimator (Estimator then adds none of its own). Trained in two calls with `save_summary_steps=3`,
evaluated in between. Reports every event Estimator's `SummarySaverHook` wrote: per step, its tags
in order, each scalar's value and each histogram's count, sum, min and max."""
import glob

import numpy as np
import tensorflow as tf

rng = np.random.RandomState(7)
X = rng.randn(48, 3).astype(np.float32)
Y = (X[:, 0] + X[:, 1] > 0).astype(np.int32)


def report(values):
    print("eval_results", repr({k: float(v) for k, v in sorted(values.items())}))


def input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).repeat().batch(6)


def model_fn(features, labels, mode, params):
    hidden = tf.compat.v1.layers.dense(features["x"], 4, activation=tf.nn.relu,
                                       kernel_initializer=tf.compat.v1.constant_initializer(0.3))
    logits = tf.compat.v1.layers.dense(hidden, 2, kernel_initializer=tf.compat.v1.constant_initializer(-0.2))
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    step = tf.compat.v1.train.get_global_step()
    with tf.name_scope("schedule"):
        learning_rate = tf.compat.v1.train.exponential_decay(0.5, step, 2, 0.9)
        tf.compat.v1.summary.scalar("learning_rate", learning_rate)
    tf.compat.v1.summary.histogram("logits", logits)
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1, output_type=tf.int32), labels), tf.float32))
    tf.compat.v1.summary.scalar("batch_accuracy", accuracy)
    if params.get("own_loss_summary"):
        tf.compat.v1.summary.scalar("loss", loss * 2.0)
    train_op = tf.compat.v1.train.GradientDescentOptimizer(learning_rate).minimize(loss, global_step=step)
    metrics = {"accuracy": tf.compat.v1.metrics.accuracy(labels, tf.argmax(logits, 1))}
    return tf.compat.v1.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops=metrics)


def report_events(model_dir):
    for path in sorted(glob.glob(model_dir + "/events.out.tfevents.*")):
        for event in tf.compat.v1.train.summary_iterator(path):
            if not event.HasField("summary") or not event.summary.value:
                continue
            values = {"step": event.step, "tags": len(event.summary.value)}
            for order, value in enumerate(event.summary.value):
                values[f"{value.tag}@order"] = order
                if value.HasField("simple_value"):
                    values[value.tag] = value.simple_value
                elif value.HasField("histo"):
                    histo = value.histo
                    values.update({f"{value.tag}/num": histo.num, f"{value.tag}/sum": histo.sum,
                                   f"{value.tag}/min": histo.min, f"{value.tag}/max": histo.max})
            report(values)


for model_dir, params in (("model_summaries", {}), ("model_own_loss", {"own_loss_summary": True})):
    config = tf.compat.v1.estimator.RunConfig(tf_random_seed=1, save_summary_steps=3, save_checkpoints_steps=100)
    est = tf.compat.v1.estimator.Estimator(model_fn, model_dir=model_dir, config=config, params=params)
    est.train(input_fn, max_steps=4)
    report(est.evaluate(input_fn, steps=2))
    est.train(input_fn, max_steps=8)
    report(est.evaluate(input_fn, steps=2))
    report_events(model_dir)
