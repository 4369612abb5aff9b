"""Every import spelling of the same TF1 API resolves to one canonical name."""

from __future__ import annotations

import libcst as cst
import pytest

from tfmigrate.names import AliasTable

CASES = [
    ("import tensorflow as tf", "tf.compat.v1.estimator.tpu.TPUEstimator", "estimator.tpu.TPUEstimator"),
    ("import tensorflow as tf", "tf.estimator.tpu.TPUEstimator", "estimator.tpu.TPUEstimator"),
    ("import tensorflow.compat.v1 as tf", "tf.estimator.tpu.TPUEstimator", "estimator.tpu.TPUEstimator"),
    ("import tensorflow.compat.v1 as tf1", "tf1.estimator.tpu.TPUEstimator", "estimator.tpu.TPUEstimator"),
    ("from tensorflow.compat.v1 import estimator as tf_estimator", "tf_estimator.tpu.TPUEstimator", "estimator.tpu.TPUEstimator"),
    ("from tensorflow import estimator", "estimator.tpu.TPUEstimator", "estimator.tpu.TPUEstimator"),
    ("import tensorflow as tf", "tf.contrib.tpu.TPUEstimator", "estimator.tpu.TPUEstimator"),
    ("from tensorflow.contrib import tpu as contrib_tpu", "contrib_tpu.TPUEstimator", "estimator.tpu.TPUEstimator"),
    ("from tensorflow.contrib import tpu as contrib_tpu", "contrib_tpu.CrossShardOptimizer", "tpu.CrossShardOptimizer"),
    ("from tensorflow.contrib.tpu import TPUEstimator", "TPUEstimator", "estimator.tpu.TPUEstimator"),
    ("import tensorflow", "tensorflow.compat.v1.layers.dense", "layers.dense"),
    ("import tensorflow.compat.v1 as tf\ntpu_lib = tf.estimator.tpu", "tpu_lib.TPUConfig", "estimator.tpu.TPUConfig"),
    ("import tensorflow as tf\nv1 = tf.compat.v1", "v1.train.AdamOptimizer", "train.AdamOptimizer"),
    ("from tensorflow_estimator.compat.v1 import estimator as tf_est", "tf_est.tpu.RunConfig", "estimator.tpu.RunConfig"),
    ("import tensorflow.contrib.cluster_resolver as cr", "cr.TPUClusterResolver", "distribute.cluster_resolver.TPUClusterResolver"),
]


@pytest.mark.parametrize("imports,expr,expected", CASES)
def test_canonical(imports: str, expr: str, expected: str) -> None:
    table = AliasTable.from_module(cst.parse_module(imports + "\n"))
    assert table.canonical(cst.parse_expression(expr)) == expected


def test_unrelated_names_do_not_resolve() -> None:
    table = AliasTable.from_module(cst.parse_module("import numpy as np\nimport tensorflow as tf\n"))
    assert table.canonical(cst.parse_expression("np.mean")) is None
    assert table.canonical(cst.parse_expression("estimator.train")) is None


def test_imports_inside_functions_count() -> None:
    table = AliasTable.from_module(cst.parse_module("def main():\n    import tensorflow.compat.v1 as tf\n"))
    assert table.canonical(cst.parse_expression("tf.train.AdamOptimizer")) == "train.AdamOptimizer"


def test_model_class_names_are_valid_keras_scope_names() -> None:
    from tfmigrate.estimator.plan import camel

    assert camel("model_fn") == "KerasModel"
    assert camel("resnet_model_fn") == "ResnetModel"
    assert camel("_model_fn") == "KerasModel"
    assert camel("_bert_fn") == "BertModel"
