"""Trains a small MLP classifier with TPUEstimator (the bundled tfmigrate example).

A TF1 program in the shape of the TPU reference models: an input_fn that reads the per-shard
batch size from params, a model_fn that returns a TPUEstimatorSpec, CrossShardOptimizer on TPU,
RunConfig/TPUConfig with iterations_per_loop. The data is synthetic (so the example runs
anywhere); the initial weights are fixed so the run is reproducible.

Run it on TF <= 2.15 with tensorflow-estimator, or migrate it:  tfmigrate examples/
"""
import argparse
import tempfile

import numpy as np
import tensorflow.compat.v1 as tf

NUM_CLASSES = 4
NUM_FEATURES = 12

_rng = np.random.RandomState(1234)
_CENTERS = _rng.normal(0.0, 1.5, size=(NUM_CLASSES, NUM_FEATURES)).astype(np.float32)
TRAIN_LABELS = _rng.randint(0, NUM_CLASSES, size=512).astype(np.int32)
TRAIN_FEATURES = (_CENTERS[TRAIN_LABELS] + _rng.normal(0.0, 1.0, size=(512, NUM_FEATURES))).astype(np.float32)
EVAL_LABELS = _rng.randint(0, NUM_CLASSES, size=128).astype(np.int32)
EVAL_FEATURES = (_CENTERS[EVAL_LABELS] + _rng.normal(0.0, 1.0, size=(128, NUM_FEATURES))).astype(np.float32)
HIDDEN_INIT = _rng.normal(0.0, 0.2, size=(NUM_FEATURES, 32)).astype(np.float32)
LOGITS_INIT = _rng.normal(0.0, 0.2, size=(32, NUM_CLASSES)).astype(np.float32)


def train_input_fn(params):
  """Repeating training batches of params['batch_size'] examples."""
  dataset = tf.data.Dataset.from_tensor_slices(({'pixels': TRAIN_FEATURES}, TRAIN_LABELS))
  dataset = dataset.repeat()
  return dataset.batch(params['batch_size'], drop_remainder=True)


def eval_input_fn(params):
  dataset = tf.data.Dataset.from_tensor_slices(({'pixels': EVAL_FEATURES}, EVAL_LABELS))
  return dataset.batch(params['batch_size'], drop_remainder=True)


def model_fn(features, labels, mode, params):
  """A two-layer perceptron over the 'pixels' feature."""
  net = features['pixels']
  net = tf.layers.dense(
      net, params['hidden_units'], activation=tf.nn.relu,
      kernel_initializer=tf.constant_initializer(HIDDEN_INIT),
      bias_initializer=tf.zeros_initializer())
  net = tf.layers.dropout(net, rate=params['dropout'],
                          training=mode == tf.estimator.ModeKeys.TRAIN)
  logits = tf.layers.dense(
      net, NUM_CLASSES,
      kernel_initializer=tf.constant_initializer(LOGITS_INIT),
      bias_initializer=tf.zeros_initializer())
  loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)

  optimizer = tf.train.AdamOptimizer(learning_rate=params['learning_rate'])
  if params['use_tpu']:
    optimizer = tf.tpu.CrossShardOptimizer(optimizer)
  train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
  return tf.estimator.tpu.TPUEstimatorSpec(mode=mode, loss=loss, train_op=train_op)


def main():
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument('--use_tpu', action='store_true')
  parser.add_argument('--tpu', default=None, help='TPU name, when --use_tpu')
  parser.add_argument('--model_dir', default=None)
  parser.add_argument('--train_steps', type=int, default=60)
  parser.add_argument('--iterations_per_loop', type=int, default=10)
  args = parser.parse_args()

  model_dir = args.model_dir or tempfile.mkdtemp()
  tpu_cluster_resolver = None
  if args.use_tpu:
    tpu_cluster_resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu=args.tpu)
  run_config = tf.estimator.tpu.RunConfig(
      cluster=tpu_cluster_resolver,
      model_dir=model_dir,
      save_checkpoints_steps=20,
      keep_checkpoint_max=2,
      tpu_config=tf.estimator.tpu.TPUConfig(iterations_per_loop=args.iterations_per_loop))
  estimator = tf.estimator.tpu.TPUEstimator(
      model_fn=model_fn,
      config=run_config,
      use_tpu=args.use_tpu,
      train_batch_size=32,
      eval_batch_size=32,
      params={'hidden_units': 32, 'dropout': 0.0, 'learning_rate': 0.01})

  for stage in range(3):
    estimator.train(input_fn=train_input_fn, max_steps=(stage + 1) * args.train_steps // 3)
    results = estimator.evaluate(input_fn=eval_input_fn, steps=4)
    print('eval_results', {k: float(v) for k, v in sorted(results.items())})


if __name__ == '__main__':
  main()
