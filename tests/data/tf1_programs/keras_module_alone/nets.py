"""The model module of a two-module TF 1.x program: Keras layers alone (no estimator or Session of
its own), a layer per `hidden_units` entry; `trainer.py` builds it in its model_fn."""
import numpy as np
import tensorflow as tf


def build_net(hidden_units):
  layers = [tf.keras.layers.Dense(units, activation=tf.nn.relu) for units in hidden_units]
  return tf.keras.Sequential(layers + [tf.keras.layers.Dense(3)])


def data(n, seed):
  rng = np.random.RandomState(seed)
  x = rng.rand(n, 5).astype(np.float32)
  y = (x.sum(axis=1) * 1.7).astype(np.int32) % 3
  return x, y
