"""A TF 1.x Estimator program that trains with `tf.contrib.layers.optimize_loss`, as the TF 1.0-1.4
tutorials and templates wrote it: the optimizer by name, a learning-rate decay function, gradient
clipping by global norm and its summaries, the UPDATE_OPS it runs first (batch norm); a second
estimator passes an optimizer instance and the loss through `from tensorflow.contrib import layers`."""
import numpy as np
import tensorflow as tf
from tensorflow.contrib import layers as contrib_layers

rng = np.random.RandomState(5)
FEATURES = rng.normal(size=(64, 4)).astype(np.float32)
LABELS = (FEATURES @ np.array([1.0, -2.0, 0.5, 1.5], np.float32) > 0).astype(np.int32)


def network(features, mode):
  net = tf.layers.dense(features['x'], 8, activation=tf.nn.relu,
                        kernel_initializer=tf.glorot_uniform_initializer(seed=1), name='hidden')
  net = tf.layers.batch_normalization(net, training=mode == tf.estimator.ModeKeys.TRAIN, name='bn')
  return tf.layers.dense(net, 2, kernel_initializer=tf.glorot_uniform_initializer(seed=2), name='logits')


def named_optimizer_model_fn(features, labels, mode, params):
  logits = network(features, mode)
  if mode == tf.estimator.ModeKeys.PREDICT:
    return tf.estimator.EstimatorSpec(mode, predictions={'probabilities': tf.nn.softmax(logits)})
  loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
  train_op = tf.contrib.layers.optimize_loss(
      loss=loss,
      global_step=tf.train.get_global_step(),
      learning_rate=params['learning_rate'],
      optimizer='Adam',
      learning_rate_decay_fn=lambda lr, step: tf.train.exponential_decay(lr, step, 5, 0.5),
      clip_gradients=0.5,
      summaries=['loss', 'learning_rate', 'global_gradient_norm'])
  metrics = {'accuracy': tf.metrics.accuracy(labels, tf.argmax(logits, 1))}
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops=metrics)


def instance_optimizer_model_fn(features, labels, mode):
  logits = network(features, mode)
  loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
  train_op = contrib_layers.optimize_loss(
      loss, tf.train.get_or_create_global_step(), learning_rate=None,
      optimizer=tf.train.MomentumOptimizer(0.1, momentum=0.9), summaries=[])
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def input_fn(epochs=None):
  return tf.data.Dataset.from_tensor_slices(({'x': FEATURES}, LABELS)).repeat(epochs).batch(16)


def main(_):
  config = tf.estimator.RunConfig(tf_random_seed=3, save_checkpoints_steps=10)
  classifier = tf.estimator.Estimator(named_optimizer_model_fn, model_dir='named_model', config=config,
                                      params={'learning_rate': 0.05})
  classifier.train(input_fn, steps=12)
  print(classifier.evaluate(lambda: input_fn(1)))
  for i, p in enumerate(classifier.predict(lambda: input_fn(1))):
    if i == 2:
      break
  momentum = tf.estimator.Estimator(instance_optimizer_model_fn, model_dir='instance_model', config=config)
  momentum.train(input_fn, steps=8)
  print(momentum.evaluate(lambda: input_fn(1)))


if __name__ == '__main__':
  tf.app.run()
