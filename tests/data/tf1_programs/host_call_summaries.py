"""A TF 1.x TPUEstimator program with the TPU reference models' `host_call`: the step's loss and
learning rate sent to a host function that writes them with `tf.contrib.summary` (imported as
`from tensorflow.contrib import summary`) under `create_file_writer`/`always_record_summaries`."""
import numpy as np
import tensorflow as tf
from tensorflow.contrib import summary

MODEL_DIR = 'host_call_model'
rng = np.random.RandomState(5)
X = rng.uniform(size=(40, 6)).astype(np.float32)
Y = (X[:, 0] + X[:, 1] > 1.0).astype(np.int32)


def model_fn(features, labels, mode, params):
  hidden = tf.layers.dense(features['x'], 8, activation=tf.nn.relu,
                           kernel_initializer=tf.glorot_uniform_initializer(seed=1))
  logits = tf.layers.dense(hidden, 2, kernel_initializer=tf.glorot_uniform_initializer(seed=2))
  if mode == tf.estimator.ModeKeys.PREDICT:
    return tf.contrib.tpu.TPUEstimatorSpec(mode, predictions={'logits': logits})
  loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
  global_step = tf.train.get_global_step()
  learning_rate = tf.train.exponential_decay(0.1, global_step, 5, 0.5)
  train_op = tf.train.GradientDescentOptimizer(learning_rate).minimize(loss, global_step)

  def host_call_fn(gs, loss, lr):
    gs = gs[0]
    with summary.create_file_writer(MODEL_DIR).as_default():
      with summary.always_record_summaries():
        summary.scalar('loss', loss[0], step=gs)
        summary.scalar('learning_rate', lr[0], step=gs)
        return summary.all_summary_ops()

  host_call = (host_call_fn, [tf.reshape(global_step, [1]), tf.reshape(loss, [1]), tf.reshape(learning_rate, [1])])
  if mode == tf.estimator.ModeKeys.EVAL:
    return tf.contrib.tpu.TPUEstimatorSpec(mode, loss=loss)
  return tf.contrib.tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op, host_call=host_call)


def input_fn(params):
  ds = tf.data.Dataset.from_tensor_slices(({'x': X}, Y))
  return ds.repeat().batch(params['batch_size'], drop_remainder=True)


def eval_input_fn(params):
  return tf.data.Dataset.from_tensor_slices(({'x': X}, Y)).batch(params['batch_size'], drop_remainder=True)


def main(_):
  config = tf.contrib.tpu.RunConfig(model_dir=MODEL_DIR, tf_random_seed=7, tpu_config=tf.contrib.tpu.TPUConfig(iterations_per_loop=4))
  estimator = tf.contrib.tpu.TPUEstimator(model_fn=model_fn, config=config, use_tpu=False,
                                          train_batch_size=8, eval_batch_size=8)
  estimator.train(input_fn, max_steps=12)
  print(estimator.evaluate(eval_input_fn, steps=5))


if __name__ == '__main__':
  tf.app.run()
