"""A TF 1.x program fed by `tf.estimator.inputs.pandas_input_fn`: a canned LinearClassifier over a
DataFrame's numeric and string columns, and an Estimator whose targets are a DataFrame's two columns,
trained through an input_fn that unpacks and extends the tensors pandas_input_fn returns."""
import numpy as np
import pandas as pd
import tensorflow as tf

rng = np.random.RandomState(3)
FRAME = pd.DataFrame({
    'age': rng.uniform(20, 60, 40).astype(np.float32),
    'hours': rng.uniform(10, 50, 40).astype(np.float32),
    'kind': rng.choice(['a', 'b', 'c'], 40),
})
LABEL = pd.Series((FRAME['age'] + FRAME['hours'] > 70).astype(np.int64))
TARGETS = pd.DataFrame({'sum': FRAME['age'] + FRAME['hours'], 'gap': FRAME['age'] - FRAME['hours']})

COLUMNS = [
    tf.feature_column.numeric_column('age'),
    tf.feature_column.numeric_column('hours'),
    tf.feature_column.indicator_column(tf.feature_column.categorical_column_with_vocabulary_list('kind', ['a', 'b', 'c'])),
]


def two_targets_model_fn(features, labels, mode):
  x = tf.stack([features['age'], features['hours'], features['ratio']], axis=1) / 50.0
  out = tf.layers.dense(x, 2, kernel_initializer=tf.constant_initializer(0.2), name='out')
  loss = (tf.losses.mean_squared_error(labels['sum'] / 50.0, out[:, 0])
          + tf.losses.mean_squared_error(labels['gap'] / 50.0, out[:, 1]))
  train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, tf.train.get_global_step())
  metrics = {'sum_error': tf.metrics.mean_absolute_error(labels['sum'] / 50.0, out[:, 0])}
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops=metrics)


def with_ratio(num_epochs):
  def input_fn():
    features, targets = tf.estimator.inputs.pandas_input_fn(
        FRAME, TARGETS, batch_size=8, num_epochs=num_epochs, shuffle=False)()
    features['ratio'] = features['age'] / features['hours']
    return features, targets
  return input_fn


def main(_):
  classifier = tf.estimator.LinearClassifier(COLUMNS, model_dir='linear')
  classifier.train(tf.estimator.inputs.pandas_input_fn(FRAME, LABEL, batch_size=8, num_epochs=None, shuffle=False), steps=10)
  print(classifier.evaluate(tf.estimator.inputs.pandas_input_fn(FRAME, LABEL, batch_size=16, shuffle=False)))
  head = tf.estimator.inputs.pandas_input_fn(FRAME.head(3), batch_size=2, shuffle=False)
  print([float(p['logistic'][0]) for p in classifier.predict(head)])
  regressor = tf.estimator.Estimator(two_targets_model_fn, model_dir='two_targets')
  regressor.train(with_ratio(None), steps=7)
  print(regressor.evaluate(with_ratio(1)))


if __name__ == '__main__':
  tf.app.run()
