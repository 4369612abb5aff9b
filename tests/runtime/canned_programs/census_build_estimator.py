"""Census-sample shape: feature columns built at module level, `build_estimator(config,
embedding_size, hidden_units)` returning a wide & deep `tf.estimator.DNNLinearCombinedClassifier`,
`tf.estimator.train_and_evaluate` with a TrainSpec(max_steps) and an EvalSpec(steps), then
`evaluate` and `predict`. Each run trains 30 more steps than the model_dir holds."""
import numpy as np
import tensorflow as tf

rng = np.random.RandomState(7)
N = 200
EDUCATION = ['Bachelors', 'HS-grad', 'Masters', 'Doctorate', 'Some-college']
OCCUPATION = ['Tech-support', 'Craft-repair', 'Sales', 'Exec-managerial', 'Prof-specialty']
DATA = {
    'age': rng.randint(17, 80, size=N).astype(np.float32),
    'education': rng.choice(EDUCATION, size=N),
    'occupation': rng.choice(OCCUPATION + ['Unknown'], size=N),
    'hours_per_week': rng.randint(10, 70, size=N).astype(np.float32),
    'relationship': rng.randint(0, 4, size=N).astype(np.int64),
    'capital_gain': rng.exponential(2.0, size=N).astype(np.float32),
}
LOGIT = (0.05 * (DATA['age'] - 40) + 0.04 * (DATA['hours_per_week'] - 40)
         + 1.5 * np.isin(DATA['education'], ['Masters', 'Doctorate']) - 0.8 * (DATA['relationship'] == 2))
LABELS = (LOGIT + rng.normal(0, 0.7, size=N) > 0).astype(np.int64)

# Columns at module level, as the census sample's model.py has them.
age = tf.feature_column.numeric_column('age')
hours_per_week = tf.feature_column.numeric_column('hours_per_week', normalizer_fn=lambda x: x / 40.0)
education = tf.feature_column.categorical_column_with_vocabulary_list('education', EDUCATION)
occupation = tf.feature_column.categorical_column_with_hash_bucket('occupation', hash_bucket_size=30)
relationship = tf.feature_column.categorical_column_with_identity('relationship', num_buckets=4)
gain = tf.feature_column.numeric_column('capital_gain')
gain_weighted = tf.feature_column.weighted_categorical_column(
    tf.feature_column.categorical_column_with_identity('relationship', num_buckets=4), 'capital_gain')
age_buckets = tf.feature_column.bucketized_column(age, boundaries=[18, 25, 30, 35, 40, 45, 50, 55, 60, 65])

wide_columns = [
    education, occupation, relationship, age_buckets, gain_weighted,
    tf.feature_column.crossed_column(['education', 'occupation'], hash_bucket_size=60),
    tf.feature_column.crossed_column([age_buckets, 'education', 'occupation'], hash_bucket_size=80),
]


def build_estimator(config, embedding_size=8, hidden_units=None):
  deep_columns = [
      tf.feature_column.indicator_column(education),
      tf.feature_column.indicator_column(relationship),
      tf.feature_column.embedding_column(occupation, dimension=embedding_size),
      tf.feature_column.embedding_column(gain_weighted, dimension=3, combiner='sqrtn'),
      age, hours_per_week, gain,
  ]
  return tf.estimator.DNNLinearCombinedClassifier(
      config=config,
      linear_feature_columns=wide_columns,
      dnn_feature_columns=deep_columns,
      dnn_hidden_units=hidden_units or [20, 10],
  )


def input_fn(start, stop, num_epochs=None, batch_size=20):
  features = {k: v[start:stop] for k, v in DATA.items()}
  dataset = tf.data.Dataset.from_tensor_slices((features, LABELS[start:stop]))
  return dataset.repeat(num_epochs).batch(batch_size)


def main():
  config = tf.estimator.RunConfig(model_dir='census_job', tf_random_seed=11, save_checkpoints_steps=10)
  estimator = build_estimator(config, embedding_size=4, hidden_units=[16, 8])
  checkpoint = estimator.latest_checkpoint()
  start = int(checkpoint.rsplit('-', 1)[1]) if checkpoint else 0
  train_spec = tf.estimator.TrainSpec(input_fn=lambda: input_fn(0, 160), max_steps=start + 30)
  eval_spec = tf.estimator.EvalSpec(input_fn=lambda: input_fn(160, N, num_epochs=1), steps=2, throttle_secs=0)
  metrics, _ = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
  print('eval_results', {k: float(v) for k, v in sorted(metrics.items())})
  results = estimator.evaluate(input_fn=lambda: input_fn(160, N, num_epochs=1))
  print('eval_results', {k: float(v) for k, v in sorted(results.items())})
  for p in estimator.predict(input_fn=lambda: input_fn(160, 163, num_epochs=1)):
    print('eval_results', {'logistic': float(p['logistic'][0]), 'class_id': float(p['class_ids'][0]),
                           'p0': float(p['probabilities'][0])})


if __name__ == '__main__':
  main()
