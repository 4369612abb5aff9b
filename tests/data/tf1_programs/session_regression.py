"""A TF 1.x program with no estimator: a linear regression fed through placeholders, trained in a
`tf.Session`, checkpointed with a `Saver` and evaluated from the restored checkpoint. It prints
`eval_results {...}` lines (loss, weights, global step) for the equivalence test."""
from __future__ import absolute_import

import os

import numpy as np
import tensorflow as tf

flags = tf.app.flags
FLAGS = flags.FLAGS
flags.DEFINE_integer("steps", 12, "training steps")
flags.DEFINE_string("model_dir", "model", "where the checkpoint goes")


def build_graph(learning_rate):
    features = tf.placeholder(tf.float32, [None, 3], name="features")
    labels = tf.placeholder(tf.float32, [None, 1], name="labels")
    with tf.variable_scope("linear"):
        weights = tf.get_variable("weights", [3, 1], initializer=tf.constant_initializer([[0.5], [-0.25], [0.1]]))
        bias = tf.get_variable("bias", [1], initializer=tf.zeros_initializer())
    predictions = tf.matmul(features, weights) + bias
    loss = tf.losses.mean_squared_error(labels, predictions)
    global_step = tf.train.get_or_create_global_step()
    train_op = tf.train.AdamOptimizer(learning_rate).minimize(loss, global_step=global_step)
    return features, labels, loss, train_op, global_step


def batches(steps):
    rng = np.random.RandomState(7)
    for _ in range(steps):
        x = rng.uniform(-1.0, 1.0, size=(8, 3)).astype(np.float32)
        yield x, x.dot(np.array([[1.0], [2.0], [-1.0]], np.float32)) + 0.3


def main(_):
    features, labels, loss, train_op, global_step = build_graph(0.05)
    saver = tf.train.Saver()
    x_eval, y_eval = next(batches(1))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step, (x, y) in enumerate(batches(FLAGS.steps)):
            value, _ = sess.run([loss, train_op], {features: x, labels: y})
            if step % 4 == 3:
                print("eval_results", {"loss": float(value), "global_step": float(sess.run(global_step))})
        path = saver.save(sess, os.path.join(FLAGS.model_dir, "model.ckpt"), global_step=global_step)
    tf.reset_default_graph()
    features, labels, loss, _, global_step = build_graph(0.05)
    with tf.Session() as sess:
        tf.train.Saver().restore(sess, path)
        with tf.variable_scope("linear", reuse=True):
            weights = sess.run(tf.get_variable("weights"))
        value = sess.run(loss, {features: x_eval, labels: y_eval})
        tf.logging.info("restored from %s", path)
        print("eval_results", {"loss": float(value), "global_step": float(sess.run(global_step)),
                               **{"w%d" % i: float(w) for i, w in enumerate(weights[:, 0])}})


if __name__ == "__main__":
    tf.app.run()
