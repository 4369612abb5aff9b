"""A TF 1.x Estimator whose model_fn normalizes with `tf.keras.layers.BatchNormalization` and runs
the UPDATE_OPS with its train op, as TF1 programs were told to. Keras 2 built into a TF1 graph kept
the layer's moving-statistics updates out of UPDATE_OPS, so TF 1.x never moved them: evaluation
normalizes with the initial mean 0 and variance 1. The model_fn migrates to a Keras model."""
import numpy as np
import tensorflow as tf
from tensorflow.keras import layers


def model_fn(features, labels, mode, params):
  training = mode == tf.estimator.ModeKeys.TRAIN
  x = layers.Dense(params['hidden'], activation='relu')(features['x'])
  x = layers.BatchNormalization()(x, training=training)
  logits = layers.Dense(3)(x)
  predictions = tf.argmax(logits, axis=1)
  if mode == tf.estimator.ModeKeys.PREDICT:
    return tf.estimator.EstimatorSpec(mode, predictions={'class': predictions})
  loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
  update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
  with tf.control_dependencies(update_ops):
    train_op = tf.train.MomentumOptimizer(0.05, 0.9).minimize(loss, global_step=tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(
      mode, loss=loss, train_op=train_op, eval_metric_ops={'accuracy': tf.metrics.accuracy(labels, predictions)})


def input_fn(seed, n):
  def fn():
    rng = np.random.RandomState(seed)
    x = (rng.randn(n, 6) * 3.0 + 1.5).astype(np.float32)
    y = np.argmax(x[:, :3], axis=1).astype(np.int32)
    return tf.data.Dataset.from_tensor_slices(({'x': x}, y)).batch(8)
  return fn


def main(_):
  estimator = tf.estimator.Estimator(model_fn=model_fn, model_dir='model', params={'hidden': 16},
                                     config=tf.estimator.RunConfig(tf_random_seed=3))
  estimator.train(input_fn(0, 96), steps=12)
  print(estimator.evaluate(input_fn(1, 48)))


if __name__ == '__main__':
  tf.app.run()
