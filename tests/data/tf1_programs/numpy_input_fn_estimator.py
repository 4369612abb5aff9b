"""A TF 1.x Estimator program fed by `tf.estimator.inputs.numpy_input_fn`: passed to the estimator
as it is, called by an input_fn that indexes and transforms the tensors it returns, and given a
single array (its features a tensor, not a dict) for predictions."""
import numpy as np
import tensorflow as tf

rng = np.random.RandomState(5)
FEATURES = rng.normal(size=(50, 3)).astype(np.float32)
TARGETS = (FEATURES @ np.array([[0.5], [-1.0], [2.0]], np.float32) + 0.3).astype(np.float32)


def model_fn(features, labels, mode):
  x = features['x'] if isinstance(features, dict) else features
  if isinstance(features, dict) and 'doubled' in features:
    x = tf.concat([x, features['doubled'][:, :1]], axis=1)[:, :3]
  prediction = tf.layers.dense(x, 1, kernel_initializer=tf.constant_initializer(0.1), name='linear')
  if mode == tf.estimator.ModeKeys.PREDICT:
    return tf.estimator.EstimatorSpec(mode, predictions={'y': prediction})
  loss = tf.losses.mean_squared_error(labels, prediction)
  train_op = tf.train.GradientDescentOptimizer(0.05).minimize(loss, tf.train.get_global_step())
  metrics = {'mae': tf.metrics.mean_absolute_error(labels, prediction)}
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops=metrics)


def scaled_input_fn():
  features, labels = tf.estimator.inputs.numpy_input_fn(
      {'x': FEATURES}, TARGETS, batch_size=8, num_epochs=None, shuffle=False)()
  features['doubled'] = features['x'] * 2.0
  return features, labels * 0.5


def main(_):
  estimator = tf.estimator.Estimator(model_fn, model_dir='model', config=tf.estimator.RunConfig(tf_random_seed=1))
  train = tf.estimator.inputs.numpy_input_fn({'x': FEATURES}, TARGETS, batch_size=8, num_epochs=None, shuffle=False)
  estimator.train(train, steps=9)
  evaluation = tf.estimator.inputs.numpy_input_fn({'x': FEATURES}, TARGETS, batch_size=16, num_epochs=1, shuffle=False)
  print(estimator.evaluate(evaluation))
  estimator.train(scaled_input_fn, steps=5)
  print(estimator.evaluate(evaluation))
  predict = tf.estimator.inputs.numpy_input_fn(FEATURES[:5], batch_size=2, shuffle=False)
  print([float(p['y'][0]) for p in estimator.predict(predict)])


if __name__ == '__main__':
  tf.app.run()
