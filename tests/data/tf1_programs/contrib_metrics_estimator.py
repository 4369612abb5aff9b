"""A TF 1.x Estimator regression program whose evaluation uses `tf.contrib.metrics`, in the three
ways programs reached it: `from tensorflow.contrib import metrics as contrib_metrics` (the STS-B
path of BERT-style classifiers: predictions and labels gathered with `streaming_concat`, Pearson's
r), the `tf.contrib.metrics.X` chain, and a name imported from the module."""
import numpy as np
import tensorflow as tf
from tensorflow.contrib import metrics as contrib_metrics
from tensorflow.contrib.metrics import streaming_covariance

rng = np.random.RandomState(11)
FEATURES = rng.normal(size=(48, 3)).astype(np.float32)
TARGETS = (FEATURES @ np.array([0.7, -1.2, 0.4], np.float32) + 0.1 * rng.normal(size=48)).astype(np.float32)


def model_fn(features, labels, mode, params):
  hidden = tf.layers.dense(features['x'], 6, activation=tf.nn.tanh,
                           kernel_initializer=tf.glorot_uniform_initializer(seed=1), name='hidden')
  score = tf.squeeze(tf.layers.dense(hidden, 1, kernel_initializer=tf.glorot_uniform_initializer(seed=2),
                                     name='score'), axis=1)
  if mode == tf.estimator.ModeKeys.PREDICT:
    return tf.estimator.EstimatorSpec(mode, predictions={'score': score})
  loss = tf.losses.mean_squared_error(labels, score)
  train_op = tf.train.GradientDescentOptimizer(params['learning_rate']).minimize(
      loss, global_step=tf.train.get_global_step())
  all_scores, scores_op = contrib_metrics.streaming_concat(score)
  all_labels, labels_op = contrib_metrics.streaming_concat(labels)
  metrics = {
      'pearson': contrib_metrics.streaming_pearson_correlation(score, labels),
      'gathered_gap': (tf.reduce_mean(tf.abs(all_scores - all_labels)), tf.group(scores_op, labels_op)),
      'rmse': tf.contrib.metrics.streaming_root_mean_squared_error(score, labels),
      'auc': tf.contrib.metrics.streaming_auc(tf.sigmoid(score), labels > 0),
      'covariance': streaming_covariance(score, labels),
  }
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops=metrics)


def input_fn(epochs=None):
  return tf.data.Dataset.from_tensor_slices(({'x': FEATURES}, TARGETS)).repeat(epochs).batch(12)


def main(_):
  config = tf.estimator.RunConfig(tf_random_seed=4, save_checkpoints_steps=10)
  regressor = tf.estimator.Estimator(model_fn, model_dir='metrics_model', config=config,
                                     params={'learning_rate': 0.05})
  regressor.train(input_fn, steps=15)
  print(regressor.evaluate(lambda: input_fn(1)))
  for i, p in enumerate(regressor.predict(lambda: input_fn(1))):
    if i == 2:
      break


if __name__ == '__main__':
  tf.app.run()
