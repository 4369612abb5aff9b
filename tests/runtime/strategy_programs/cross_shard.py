"""A TPU program's code path: `if params['use_tpu']: optimizer = CrossShardOptimizer(optimizer)`,
a BERT-style warm-up rate from the global step, `minimize` built in every mode (TF1 evaluated
without running it), `iterations_per_loop=3`. With USE_TPU=1 on the strategy tier each replica is
a TPU core (per-replica batches, CrossShardOptimizer's loss division and sum): the model's math
does not depend on the split, so any replica count gives the one-device numbers TF 2.15 gives
with use_tpu=False."""
import os

import numpy as np
import tensorflow.compat.v1 as tf

USE_TPU = os.environ.get('USE_TPU') == '1'  # the oracle (TF 2.15, no TPU) runs it False

rng = np.random.RandomState(3)
X = rng.normal(size=(64, 4)).astype(np.float32)
Y = (X @ np.array([[1.0], [-2.0], [0.5], [0.0]], np.float32) + 0.3).astype(np.float32)
KERNEL = rng.uniform(-0.5, 0.5, size=(4, 8)).astype(np.float32)
HEAD = rng.uniform(-0.5, 0.5, size=(8, 1)).astype(np.float32)


def input_fn(params):
  ds = tf.data.Dataset.from_tensor_slices((X, Y))
  return ds.repeat().batch(params['batch_size'], drop_remainder=True)


def model_fn(features, labels, mode, params):
  hidden = tf.layers.dense(features, 8, activation=tf.nn.tanh,
                           kernel_initializer=tf.constant_initializer(KERNEL))
  output = tf.layers.dense(hidden, 1, kernel_initializer=tf.constant_initializer(HEAD))
  loss = tf.losses.mean_squared_error(labels, output)

  init_lr = params['learning_rate']
  num_train_steps = params['num_train_steps']
  num_warmup_steps = params['num_warmup_steps']
  global_step = tf.train.get_or_create_global_step()
  learning_rate = tf.constant(value=init_lr, shape=[], dtype=tf.float32)
  learning_rate = tf.train.polynomial_decay(
      learning_rate, global_step, num_train_steps, end_learning_rate=0.0,
      power=1.0, cycle=False)
  global_steps_int = tf.cast(global_step, tf.int32)
  warmup_steps_int = tf.constant(num_warmup_steps, dtype=tf.int32)
  global_steps_float = tf.cast(global_steps_int, tf.float32)
  warmup_steps_float = tf.cast(warmup_steps_int, tf.float32)
  warmup_percent_done = global_steps_float / warmup_steps_float
  warmup_learning_rate = init_lr * warmup_percent_done
  is_warmup = tf.cast(global_steps_int < warmup_steps_int, tf.float32)
  learning_rate = (
      (1.0 - is_warmup) * learning_rate + is_warmup * warmup_learning_rate)

  optimizer = tf.train.MomentumOptimizer(learning_rate, momentum=0.9)
  if params['use_tpu']:
    optimizer = tf.tpu.CrossShardOptimizer(optimizer)
  train_op = optimizer.minimize(loss, global_step=global_step)
  return tf.estimator.tpu.TPUEstimatorSpec(mode=mode, loss=loss, train_op=train_op)


def main():
  params = {'learning_rate': 0.05, 'num_train_steps': 30, 'num_warmup_steps': 8}
  config = tf.estimator.tpu.RunConfig(
      model_dir='model_dir', tpu_config=tf.estimator.tpu.TPUConfig(iterations_per_loop=3))
  estimator = tf.estimator.tpu.TPUEstimator(
      model_fn=model_fn, config=config, use_tpu=USE_TPU, params=params,
      train_batch_size=8, eval_batch_size=8)
  for steps in (5, 10, 15):
    estimator.train(input_fn, max_steps=steps)
    results = estimator.evaluate(input_fn, steps=4)
    print('eval_results', {k: float(v) for k, v in sorted(results.items())})


if __name__ == '__main__':
  main()
