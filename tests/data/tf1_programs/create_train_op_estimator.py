"""A TF 1.x Estimator program whose model_fn trains with `tf.contrib.training.create_train_op`
(the loss tensor it returns as the train_op, run after UPDATE_OPS: batch norm), clips through its
`transform_grads_fn` with `contrib.training.clip_gradient_norms_fn`, and checks its loss with
`tf.contrib.framework.is_tensor`; a second estimator passes `from tensorflow.contrib.training import
create_train_op` its own `update_ops` and `variables_to_train`."""
import numpy as np
import tensorflow as tf
from tensorflow.contrib.training import create_train_op

rng = np.random.RandomState(7)
FEATURES = rng.normal(size=(64, 4)).astype(np.float32)
LABELS = (FEATURES @ np.array([1.0, -2.0, 0.5, 1.5], np.float32) > 0).astype(np.int32)


def network(features, mode):
  net = tf.layers.dense(features['x'], 8, activation=tf.nn.relu,
                        kernel_initializer=tf.glorot_uniform_initializer(seed=1), name='hidden')
  net = tf.layers.batch_normalization(net, training=mode == tf.estimator.ModeKeys.TRAIN, name='bn')
  return tf.layers.dense(net, 2, kernel_initializer=tf.glorot_uniform_initializer(seed=2), name='logits')


def clipped_model_fn(features, labels, mode):
  logits = network(features, mode)
  if mode == tf.estimator.ModeKeys.PREDICT:
    return tf.estimator.EstimatorSpec(mode, predictions={'probabilities': tf.nn.softmax(logits)})
  loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
  assert tf.contrib.framework.is_tensor(loss)
  train_op = tf.contrib.training.create_train_op(
      loss, tf.train.AdamOptimizer(0.05),
      transform_grads_fn=tf.contrib.training.clip_gradient_norms_fn(0.5))
  metrics = {'accuracy': tf.metrics.accuracy(labels, tf.argmax(logits, 1))}
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops=metrics)


def chosen_variables_model_fn(features, labels, mode):
  logits = network(features, mode)
  loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
  head = [v for v in tf.trainable_variables() if v.name.startswith('logits/')]
  train_op = create_train_op(loss, tf.train.MomentumOptimizer(0.1, momentum=0.9),
                             update_ops=tf.get_collection(tf.GraphKeys.UPDATE_OPS), variables_to_train=head)
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def input_fn(epochs=None):
  return tf.data.Dataset.from_tensor_slices(({'x': FEATURES}, LABELS)).repeat(epochs).batch(16)


def main(_):
  config = tf.estimator.RunConfig(tf_random_seed=3, save_checkpoints_steps=10)
  classifier = tf.estimator.Estimator(clipped_model_fn, model_dir='clipped_model', config=config)
  classifier.train(input_fn, steps=12)
  print(classifier.evaluate(lambda: input_fn(1)))
  for i, p in enumerate(classifier.predict(lambda: input_fn(1))):
    if i == 2:
      break
  head_only = tf.estimator.Estimator(chosen_variables_model_fn, model_dir='head_model', config=config)
  head_only.train(input_fn, steps=8)
  print(head_only.evaluate(lambda: input_fn(1)))


if __name__ == '__main__':
  tf.app.run()
