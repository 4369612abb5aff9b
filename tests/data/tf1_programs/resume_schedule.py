"""A TF 1.x TPUEstimator trainer in the shape of the TPU reference models' main loop: it resumes its
schedule from the model_dir's last checkpoint (`estimator._load_global_step_from_checkpoint_dir`,
from `tensorflow.python.estimator`), trains to the next evaluation step and evaluates, until the
last step. Prints `eval_results {...}` lines."""
import numpy as np
import tensorflow as tf
from tensorflow.python.estimator import estimator

TRAIN_STEPS, STEPS_PER_EVAL = 6, 3


def model_fn(features, labels, mode, params):
  hidden = tf.layers.dense(features, 8, activation=tf.nn.relu)
  logits = tf.layers.dense(hidden, 3)
  loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
  train_op = tf.train.AdamOptimizer(0.01).minimize(loss, tf.train.get_global_step())

  def metric_fn(labels, logits):
    return {'accuracy': tf.metrics.accuracy(labels=labels, predictions=tf.argmax(logits, axis=1))}

  return tf.contrib.tpu.TPUEstimatorSpec(mode=mode, loss=loss, train_op=train_op, eval_metrics=(metric_fn, [labels, logits]))


def input_fn(params):
  rng = np.random.RandomState(0)
  x = rng.rand(64, 4).astype(np.float32)
  y = (x.sum(axis=1) * 1.3).astype(np.int32) % 3
  return tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(params['batch_size'], drop_remainder=True)


def main(_):
  config = tf.contrib.tpu.RunConfig(model_dir='resume_model', tf_random_seed=7,
                                    tpu_config=tf.contrib.tpu.TPUConfig(iterations_per_loop=3))
  est = tf.contrib.tpu.TPUEstimator(model_fn=model_fn, use_tpu=False, train_batch_size=16, eval_batch_size=16,
                                    config=config)
  current_step = estimator._load_global_step_from_checkpoint_dir('resume_model')
  while current_step < TRAIN_STEPS:
    next_checkpoint = min(current_step + STEPS_PER_EVAL, TRAIN_STEPS)
    est.train(input_fn=input_fn, max_steps=next_checkpoint)
    current_step = next_checkpoint
    print('eval_results %r' % {k: float(v) for k, v in est.evaluate(input_fn, steps=2).items()})


if __name__ == '__main__':
  tf.app.run()
