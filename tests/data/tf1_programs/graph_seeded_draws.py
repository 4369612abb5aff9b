"""A TF 1.x Estimator program whose random draws all come from the graph seed: `tf.layers` and an
RNN cell with their default initializers, `tf.layers.dropout` and `tf.nn.dropout`, a shuffled
input. With `tf_random_seed` set, TF 1.x gives the same numbers every run; so must the migration,
from a fresh start (no shared checkpoint)."""
import tempfile

import numpy as np
import tensorflow as tf

rand = np.random.RandomState(5)
SEQUENCES = rand.normal(size=(64, 4, 3)).astype(np.float32)
LABELS = (SEQUENCES[:, :, 0].sum(axis=1) > 0).astype(np.int32)


def model_fn(features, labels, mode, params):
  training = mode == tf.estimator.ModeKeys.TRAIN
  cell = tf.nn.rnn_cell.GRUCell(params['units'])
  _, state = tf.nn.dynamic_rnn(cell, features['sequence'], dtype=tf.float32)
  hidden = tf.layers.dense(state, 16, activation=tf.nn.relu)
  hidden = tf.layers.dropout(hidden, rate=0.3, training=training)
  if training:
    hidden = tf.nn.dropout(hidden, keep_prob=0.8)
  logits = tf.layers.dense(hidden, 2, kernel_initializer='glorot_normal')
  loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
  train_op = tf.train.AdamOptimizer(0.01).minimize(loss, global_step=tf.train.get_global_step())
  metrics = {'accuracy': tf.metrics.accuracy(labels, tf.argmax(logits, axis=1))}
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops=metrics)


def train_input_fn():
  dataset = tf.data.Dataset.from_tensor_slices(({'sequence': SEQUENCES}, LABELS))
  return dataset.shuffle(64).repeat().batch(8)


def eval_input_fn():
  return tf.data.Dataset.from_tensor_slices(({'sequence': SEQUENCES}, LABELS)).batch(16)


def main(_):
  config = tf.estimator.RunConfig(tf_random_seed=11)
  estimator = tf.estimator.Estimator(model_fn, model_dir=tempfile.mkdtemp(), config=config, params={'units': 6})
  for steps in (5, 10):
    estimator.train(train_input_fn, max_steps=steps)
    results = estimator.evaluate(eval_input_fn)
    print('eval_results', {k: float(v) for k, v in sorted(results.items())})


if __name__ == '__main__':
  tf.app.run(main)
