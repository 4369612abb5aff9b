"""A TF 1.x Estimator program whose model is a `tf.keras.Sequential` made by `create_model`, its
model_fn a branch per mode (the shape of TensorFlow's r1 MNIST module: hosted), which another
trainer of the program imports."""
import numpy as np
import tensorflow as tf


def create_model():
  l = tf.keras.layers
  return tf.keras.Sequential([
      l.Reshape(target_shape=[8, 8, 1], input_shape=(64,)),
      l.Conv2D(4, 3, padding='same', activation=tf.nn.relu),
      l.MaxPooling2D((2, 2), (2, 2), padding='same'),
      l.Flatten(),
      l.Dense(16, activation=tf.nn.relu),
      l.Dropout(0.2),
      l.Dense(10),
  ])


def model_fn(features, labels, mode, params):
  model = create_model()
  if mode == tf.estimator.ModeKeys.PREDICT:
    logits = model(features, training=False)
    return tf.estimator.EstimatorSpec(mode, predictions={'classes': tf.argmax(logits, axis=1)})
  if mode == tf.estimator.ModeKeys.TRAIN:
    logits = model(features, training=True)
    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    train_op = tf.train.AdamOptimizer(1e-2).minimize(loss, tf.train.get_or_create_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)
  logits = model(features, training=False)
  loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
  return tf.estimator.EstimatorSpec(mode, loss=loss)


def data(n, seed):
  rng = np.random.RandomState(seed)
  x = rng.rand(n, 64).astype(np.float32)
  y = (x[:, :32].sum(axis=1) > x[:, 32:].sum(axis=1)).astype(np.int32)
  return x, y


if __name__ == '__main__':
  classifier = tf.estimator.Estimator(model_fn=model_fn, model_dir='digits_model')
  classifier.train(lambda: tf.data.Dataset.from_tensor_slices(data(64, 0)).batch(16), steps=4)
