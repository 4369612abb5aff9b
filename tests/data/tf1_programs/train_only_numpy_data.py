"""A train-only TF 1.x TPUEstimator program (as cloudml-samples' TPU templates are): its input_fn
draws fake regression data with `np.random` each time it is called, nothing is seeded, and it
never evaluates or predicts. `tfmigrate verify` compares the checkpoints its `train` calls leave."""
import numpy as np
import tensorflow as tf


def model_fn(features, labels, mode, params):
  hidden = tf.layers.dense(features, 6, activation=tf.nn.relu)
  output = tf.squeeze(tf.layers.dense(hidden, 1), axis=1)
  loss = tf.nn.l2_loss(output - labels)
  optimizer = tf.train.RMSPropOptimizer(learning_rate=0.01)
  train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
  return tf.contrib.tpu.TPUEstimatorSpec(mode=mode, loss=loss, train_op=train_op, predictions=output)


def train_input_fn(params):
  x = np.random.rand(40, 4)
  w = np.random.rand(4)
  dataset = tf.data.Dataset.from_tensor_slices((tf.constant(x, tf.float32), tf.constant(x @ w, tf.float32)))
  return dataset.repeat().shuffle(16).batch(params['batch_size'], drop_remainder=True)


def main(_):
  config = tf.contrib.tpu.RunConfig(model_dir='model', tpu_config=tf.contrib.tpu.TPUConfig(iterations_per_loop=3))
  estimator = tf.contrib.tpu.TPUEstimator(model_fn, config=config, use_tpu=False, train_batch_size=8)
  estimator.train(train_input_fn, max_steps=6)
  estimator.train(train_input_fn, steps=3)


if __name__ == '__main__':
  tf.app.run()
