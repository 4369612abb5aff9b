"""Which sources are TF 1.x programs (`tfmigrate.tf1_program`): what changes how TFM101 reads them."""

from __future__ import annotations

import pytest

from tfmigrate.tf1_program import is_tf1_source

TF1 = [
    "import tensorflow as tf\nsess = tf.Session()\n",
    "from tensorflow.contrib import slim\n",
    "from tensorflow import placeholder\n",
    "from tensorflow import (\n    float32,\n    Session,  # runs the graph\n)\n",
    "from tensorflow import nn, layers\n",
    "from tensorflow.train import AdamOptimizer\n",
    "import tensorflow as tf\nloss = tf.losses.sparse_softmax_cross_entropy(labels=y, logits=z)\n",  # TF1's losses
    "import tensorflow as tf\nacc = tf.metrics.accuracy(labels=y, predictions=p)\n",  # and metrics
    "import tensorflow as tf\nat_k = tf.metrics.precision_at_k(y, p, 5)\n",
]
NOT_TF1 = [
    "import tensorflow as tf\nmodel = tf.keras.Sequential()\n",
    "import tensorflow.compat.v1 as tf\nsess = tf.Session()\n",  # TF2 code reaching for compat.v1
    "from tensorflow import keras\n",
    "from tensorflow.keras import layers\n",
    "from tensorflow.train import Checkpoint\n",
    "from tensorflow import float32\nx = Session()\n",  # the name is not imported from tensorflow
    "import tensorflow as tf\nloss = tf.losses.mean_squared_error(y, p)\n",  # TF2 (Keras) has these too
    "import tensorflow as tf\nerror = tf.metrics.mean_absolute_error(y, p)\nm = tf.metrics.Precision()\n",
    "import tensorflow as tf\nm = tf.metrics.mean_squared_error(y, p)\n",
]


@pytest.mark.parametrize("source", TF1)
def test_tf1_names_imported_by_name_make_a_tf1_program(source: str) -> None:
    assert is_tf1_source(source)


@pytest.mark.parametrize("source", NOT_TF1)
def test_tf2_code_is_not_read_as_tf1(source: str) -> None:
    assert not is_tf1_source(source)
