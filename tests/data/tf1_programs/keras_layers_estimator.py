"""A TF 1.x Estimator whose model_fn builds its network from `tf.keras`: a Sequential with an
input shape made by a helper (the shape of TensorFlow's r1 MNIST model), then Keras layers imported
by name (Dense, BatchNormalization, Dropout) with default, unseeded initializers, a head under a
reused variable scope (so the estimator is hosted), the batch-norm updates run with the train op.
TF 1.x built all of it into its graph with Keras 2; the test runs it fresh on both sides."""
import numpy as np
import tensorflow as tf
from tensorflow.keras import layers
from tensorflow.keras.layers import Dense, Dropout


def create_body(hidden):
  return tf.keras.Sequential([
      tf.keras.layers.Reshape(target_shape=[4, 2, 1], input_shape=(8,)),
      tf.keras.layers.Conv2D(3, 2, padding='same', activation=tf.nn.relu),
      tf.keras.layers.Flatten(),
      Dense(hidden, activation='relu'),
  ])


def model_fn(features, labels, mode, params):
  training = mode == tf.estimator.ModeKeys.TRAIN
  x = create_body(params['hidden'])(features['x'], training=training)
  x = layers.BatchNormalization()(x, training=training)
  x = Dropout(0.25)(x, training=training)
  with tf.variable_scope('head', reuse=tf.AUTO_REUSE):
    logits = Dense(3)(x)
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
    x = rng.randn(n, 8).astype(np.float32)
    y = np.argmax(x[:, :3], axis=1).astype(np.int32)
    return tf.data.Dataset.from_tensor_slices(({'x': x}, y)).batch(8)
  return fn


def main(_):
  estimator = tf.estimator.Estimator(model_fn=model_fn, model_dir='model', params={'hidden': 16},
                                     config=tf.estimator.RunConfig(tf_random_seed=3))
  for _ in range(2):
    estimator.train(input_fn(0, 96), steps=6)
    print('eval_results %r' % {k: float(v) for k, v in estimator.evaluate(input_fn(1, 48)).items()})
  print([int(p['class']) for p in estimator.predict(input_fn(2, 8))])


if __name__ == '__main__':
  tf.app.run()
