"""A TF 1.x Estimator program whose input_fns return tensors their own ops make, with no dataset or
queue: constant arrays (all the data as one batch, read again every step) and fake data drawn anew
every step by random ops (unseeded ones under the RunConfig's graph seed, one with its own seed),
and a TPUEstimator fed fake data of `params['batch_size']` rows. Its model_fn calls a model_fn that
a plain Estimator uses too, so that one is kept as written where the other's is rewritten."""
import numpy as np
import tensorflow as tf

rng = np.random.RandomState(3)
FEATURES = rng.normal(size=(12, 3)).astype(np.float32)
TARGETS = (FEATURES @ np.array([[0.5], [-1.0], [2.0]], np.float32) + 0.3).astype(np.float32)


def regression_model_fn(features, labels, mode):
  hidden = tf.layers.dense(features['x'], 4, activation=tf.nn.relu, kernel_initializer=tf.constant_initializer(0.2),
                           name='hidden')
  prediction = tf.layers.dense(hidden, 1, kernel_initializer=tf.constant_initializer(0.1), name='out')
  loss = tf.losses.mean_squared_error(labels, prediction)
  train_op = tf.train.AdamOptimizer(0.05).minimize(loss, tf.train.get_global_step())
  metrics = {'mae': tf.metrics.mean_absolute_error(labels, prediction)}
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops=metrics)


def shared_model_fn(features, labels, mode):
  prediction = tf.layers.dense(features['x'], 1, kernel_initializer=tf.constant_initializer(0.3), name='linear')
  loss = tf.losses.absolute_difference(labels, prediction)
  train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def constant_input_fn():
  return {'x': tf.constant(FEATURES)}, tf.constant(TARGETS)


def fake_input_fn():
  x = tf.random_uniform([8, 3], -1.0, 1.0)
  noise = tf.random_normal([8, 1], stddev=0.1, seed=7)
  y = tf.matmul(x, tf.constant([[0.5], [-1.0], [2.0]])) + noise
  return {'x': x}, y


def tpu_model_fn(features, labels, mode, params):
  spec = shared_model_fn(features, labels, mode)
  return tf.contrib.tpu.TPUEstimatorSpec(mode, loss=spec.loss, train_op=spec.train_op)


def tpu_fake_input_fn(params):
  x = tf.random_uniform([params['batch_size'], 3], -1.0, 1.0)
  return {'x': x}, tf.reduce_sum(x, axis=1, keepdims=True)


def main(_):
  config = tf.estimator.RunConfig(tf_random_seed=11)
  estimator = tf.estimator.Estimator(regression_model_fn, model_dir='model', config=config)
  estimator.train(constant_input_fn, steps=6)
  print(estimator.evaluate(constant_input_fn, steps=2))
  estimator.train(fake_input_fn, steps=5)
  print(estimator.evaluate(fake_input_fn, steps=3))
  shared = tf.estimator.Estimator(shared_model_fn, model_dir='shared', config=config)
  shared.train(fake_input_fn, steps=3)
  print(shared.evaluate(constant_input_fn, steps=1))
  tpu_config = tf.contrib.tpu.RunConfig(model_dir='tpu_model', tf_random_seed=5,
                                        tpu_config=tf.contrib.tpu.TPUConfig(iterations_per_loop=2))
  tpu = tf.contrib.tpu.TPUEstimator(tpu_model_fn, config=tpu_config, use_tpu=False, train_batch_size=8,
                                    eval_batch_size=8)
  tpu.train(tpu_fake_input_fn, max_steps=4)
  print(tpu.evaluate(tpu_fake_input_fn, steps=2))


if __name__ == '__main__':
  tf.app.run()
