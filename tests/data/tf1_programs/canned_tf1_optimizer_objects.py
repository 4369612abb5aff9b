"""TF 1.x canned LinearRegressors each trained with an optimizer object made beforehand (the Machine
Learning Crash Course's shape: `my_optimizer = tf.train.GradientDescentOptimizer(...)` passed as
`optimizer=`), one per TF1 optimizer class with non-default settings. Prints `eval_results {...}`
lines."""
import numpy as np
import tensorflow as tf


def input_fn():
  rng = np.random.RandomState(0)
  rooms = rng.rand(64).astype(np.float32) * 4
  value = (rooms * 1.5 + 0.3).astype(np.float32)
  return tf.data.Dataset.from_tensor_slices(({'rooms': rooms}, value)).batch(8).repeat()


def train_model(name, my_optimizer, steps):
  feature_columns = [tf.feature_column.numeric_column('rooms')]
  linear_regressor = tf.estimator.LinearRegressor(feature_columns=feature_columns, optimizer=my_optimizer,
                                                  model_dir='model_' + name)
  linear_regressor.train(input_fn=input_fn, steps=steps)
  print('eval_results %r' % {k: float(v) for k, v in linear_regressor.evaluate(input_fn=input_fn, steps=2).items()})


if __name__ == '__main__':
  train_model('sgd', tf.train.GradientDescentOptimizer(learning_rate=0.01), 5)
  train_model('adagrad', tf.train.AdagradOptimizer(0.1, initial_accumulator_value=0.2), 5)
  train_model('adam', tf.train.AdamOptimizer(0.05, beta1=0.8), 5)
  train_model('momentum', tf.train.MomentumOptimizer(0.01, 0.9, use_nesterov=True), 5)
  train_model('rmsprop', tf.train.RMSPropOptimizer(0.01, decay=0.8, momentum=0.1), 5)
  train_model('ftrl', tf.train.FtrlOptimizer(0.1), 5)
