"""A TF 1.x Estimator program whose input_fn draws its data with `np.random` each time it is
called, nothing seeded (verify seeds NumPy alike on both sides), one returning a dataset and one
tensors: TF 1.x called an input_fn once per train/evaluate call, so each call trains or evaluates
on the next draw."""
import numpy as np
import tensorflow as tf


def model_fn(features, labels, mode):
  hidden = tf.layers.dense(features['x'], 6, activation=tf.nn.relu)
  output = tf.layers.dense(hidden, 1)
  loss = tf.losses.mean_squared_error(labels, output)
  train_op = tf.train.RMSPropOptimizer(0.01).minimize(loss, global_step=tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                    eval_metric_ops={'mae': tf.metrics.mean_absolute_error(labels, output)})


def input_fn():
  x = np.random.rand(40, 4).astype(np.float32)
  y = (x @ np.random.rand(4, 1)).astype(np.float32)
  return tf.data.Dataset.from_tensor_slices(({'x': x}, y)).repeat().batch(8)


def tensor_input_fn():
  x = np.random.rand(8, 4).astype(np.float32)
  return {'x': tf.constant(x)}, tf.constant((x @ np.random.rand(4, 1)).astype(np.float32))


def main(_):
  estimator = tf.estimator.Estimator(model_fn, model_dir='model')
  estimator.train(input_fn, steps=6)
  print(estimator.evaluate(input_fn, steps=2))
  estimator.train(input_fn, steps=3)
  print(estimator.evaluate(input_fn, steps=2))
  other = tf.estimator.Estimator(model_fn, model_dir='other')
  other.train(tensor_input_fn, steps=4)
  print(other.evaluate(tensor_input_fn, steps=1))


if __name__ == '__main__':
  tf.app.run()
