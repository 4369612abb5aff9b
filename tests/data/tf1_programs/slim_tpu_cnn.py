"""A TF 1.x TPUEstimator program whose model_fn is slim code, as the TPU reference models and the
slim model zoo wrote it: `tf.contrib.slim` layers in an `arg_scope`, `contrib_layers.l2_regularizer`
from `from tensorflow.contrib import layers`, the regularization losses added to the loss."""
import numpy as np
import tensorflow as tf
from tensorflow.contrib import layers as contrib_layers

slim = tf.contrib.slim

rng = np.random.RandomState(3)
IMAGES = rng.uniform(size=(48, 8, 8, 2)).astype(np.float32)
LABELS = (IMAGES[:, :4, :4, 0].sum(axis=(1, 2)) * 3 % 4).astype(np.int32)


def tower(images, is_training):
  with slim.arg_scope([slim.conv2d, slim.fully_connected],
                      weights_regularizer=contrib_layers.l2_regularizer(1e-3),
                      activation_fn=tf.nn.relu):
    net = slim.conv2d(images, 6, [3, 3], scope='conv1')
    net = slim.max_pool2d(net, [2, 2], scope='pool1')
    net = slim.conv2d(net, 8, [3, 3], stride=2, scope='conv2')
    net = slim.avg_pool2d(net, [2, 2], padding='SAME')
    net = slim.flatten(net)
    net = slim.fully_connected(net, 16, scope='fc1')
    net = slim.dropout(net, keep_prob=1.0, is_training=is_training)
    return slim.fully_connected(net, 4, activation_fn=None, scope='logits')


def model_fn(features, labels, mode, params):
  logits = tower(features['image'], mode == tf.estimator.ModeKeys.TRAIN)
  if mode == tf.estimator.ModeKeys.PREDICT:
    return tf.contrib.tpu.TPUEstimatorSpec(mode, predictions={'logits': logits})
  loss = tf.losses.sparse_softmax_cross_entropy(labels, logits) + tf.add_n(tf.losses.get_regularization_losses())
  train_op = tf.train.MomentumOptimizer(0.05, 0.9).minimize(loss, tf.train.get_global_step())
  metrics = (lambda l, g: {'accuracy': tf.metrics.accuracy(l, tf.argmax(g, 1))}, [labels, logits])
  return tf.contrib.tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op, eval_metrics=metrics)


def input_fn(params):
  ds = tf.data.Dataset.from_tensor_slices(({'image': IMAGES}, LABELS))
  return ds.repeat().batch(params['batch_size'], drop_remainder=True)


def eval_input_fn(params):
  ds = tf.data.Dataset.from_tensor_slices(({'image': IMAGES}, LABELS))
  return ds.batch(params['batch_size'], drop_remainder=True)


def main(_):
  config = tf.contrib.tpu.RunConfig(model_dir='slim_tpu_cnn_model', save_checkpoints_steps=5,
                                    tpu_config=tf.contrib.tpu.TPUConfig(iterations_per_loop=5))
  estimator = tf.contrib.tpu.TPUEstimator(model_fn=model_fn, config=config, use_tpu=False,
                                          train_batch_size=8, eval_batch_size=8, predict_batch_size=8)
  estimator.train(input_fn, max_steps=10)
  print(estimator.evaluate(eval_input_fn, steps=3))
  for i, p in enumerate(estimator.predict(eval_input_fn)):
    if i == 2:
      break


if __name__ == '__main__':
  tf.app.run()
