"""A TPUEstimator program whose training runs in `iterations_per_loop` loops on current TF and step
by step on TF 2.15 (off TPU): graph-seeded initializers, dropout and a shuffled Dataset, batch norm
with UPDATE_OPS, a tf.cond on the global step, Adam with exponential decay; checkpoints every 4
steps and summaries every 5 with loops of 3 (the loop must end on those steps); a second
estimator fine-tunes from the first through `init_from_checkpoint` inside model_fn. Reports the
evaluations, the checkpointed steps and every `loss` summary (step and value)."""
import glob
import os

import numpy as np
import tensorflow as tf

rng = np.random.RandomState(4)
X = rng.randn(96, 6).astype(np.float32)
Y = (X[:, 0] + X[:, 1] > 0).astype(np.int32)


def report(name, values):
    print("eval_results", repr({f"{name}/{k}": float(v) for k, v in sorted(values.items())}))


def input_fn(params):
    dataset = tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).shuffle(96).repeat()
    return dataset.batch(params["batch_size"], drop_remainder=True)


def model_fn(features, labels, mode, params):
    training = mode == tf.compat.v1.estimator.ModeKeys.TRAIN
    with tf.compat.v1.variable_scope("mlp"):
        w = tf.compat.v1.get_variable("w", [6, 16], initializer=tf.compat.v1.glorot_uniform_initializer())
        net = tf.nn.relu(tf.matmul(features["x"], w))
        net = tf.compat.v1.layers.batch_normalization(net, training=training, name="bn")
        if training:
            net = tf.nn.dropout(net, rate=0.3)
        logits = tf.compat.v1.layers.dense(net, 2, kernel_initializer=tf.compat.v1.random_normal_initializer(stddev=0.3))
    if params.get("init_checkpoint"):
        tf.compat.v1.train.init_from_checkpoint(params["init_checkpoint"], {"mlp/": "mlp/"})
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    if mode == tf.compat.v1.estimator.ModeKeys.EVAL:
        def metric_fn(labels, logits):
            return {"accuracy": tf.compat.v1.metrics.accuracy(labels, tf.argmax(logits, -1))}
        return tf.compat.v1.estimator.tpu.TPUEstimatorSpec(mode, loss=loss, eval_metrics=(metric_fn, [labels, logits]))
    global_step = tf.compat.v1.train.get_global_step()
    rate = tf.compat.v1.train.exponential_decay(0.05, global_step, 3, 0.8, staircase=True)
    rate = tf.cond(global_step < 2, lambda: rate * 0.5, lambda: rate)
    optimizer = tf.compat.v1.train.AdamOptimizer(rate)
    with tf.control_dependencies(tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.UPDATE_OPS)):
        train_op = optimizer.minimize(loss, global_step=global_step)
    return tf.compat.v1.estimator.tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)


def estimator(model_dir, **params):
    config = tf.compat.v1.estimator.tpu.RunConfig(
        model_dir=model_dir, tf_random_seed=3, save_checkpoints_steps=4, save_summary_steps=5, keep_checkpoint_max=20,
        tpu_config=tf.compat.v1.estimator.tpu.TPUConfig(iterations_per_loop=3))
    return tf.compat.v1.estimator.tpu.TPUEstimator(
        model_fn, config=config, use_tpu=False, train_batch_size=8, eval_batch_size=16, params=params)


def report_run(name, model_dir):
    state = tf.train.get_checkpoint_state(model_dir)
    steps = sorted(int(path.rsplit("-", 1)[1]) for path in state.all_model_checkpoint_paths)
    report(f"{name}/checkpoints", {f"{i}": step for i, step in enumerate(steps)})
    losses = {}
    for path in sorted(glob.glob(os.path.join(model_dir, "events.out.tfevents.*"))):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                if value.tag == "loss":
                    losses[f"{event.step}"] = value.simple_value
    report(f"{name}/loss_summaries", losses)


first = estimator("model_first")
first.train(input_fn, steps=11)
report("first", first.evaluate(input_fn, steps=3))
first.train(input_fn, max_steps=14)
report("first_more", first.evaluate(input_fn, steps=3))
report_run("first", "model_first")
tuned = estimator("model_tuned", init_checkpoint="model_first")
tuned.train(input_fn, max_steps=7)
report("tuned", tuned.evaluate(input_fn, steps=3))
report_run("tuned", "model_tuned")
