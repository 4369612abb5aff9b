"""`tfm.legacy.contrib_layers`: the helper modules of TF 1.x's `tf.contrib.layers.python.layers`
as tf-slim kept them (`tf_slim.layers`), each reachable as an attribute, working in a TF1 graph."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from tfmigrate.runtime import legacy

pytestmark = [pytest.mark.tf]


def test_every_kept_module_is_an_attribute_of_the_package() -> None:
    package = legacy.contrib_layers
    assert package.__name__ == "tf_slim.layers"
    for name in legacy.CONTRIB_LAYER_MODULES:
        assert getattr(package, name).__name__ == f"tf_slim.layers.{name}"


def test_named_outputs_and_a_regularizer_in_a_tf1_graph() -> None:
    utils, regularizers = legacy.contrib_layers.utils, legacy.contrib_layers.regularizers
    with tf.Graph().as_default():
        x = tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
        utils.collect_named_outputs("norms", "x", tf.norm(x, axis=-1))
        penalty = regularizers.l2_regularizer(0.5)(x)
        outputs = utils.convert_collection_to_dict("norms")
        with tf.compat.v1.Session() as session:
            norms, value = session.run([outputs["x"], penalty])
    np.testing.assert_allclose(norms, np.linalg.norm(np.arange(6).reshape(2, 3), axis=-1), rtol=1e-6)
    assert value == pytest.approx(0.5 * 0.5 * float((np.arange(6) ** 2).sum()))  # scale * l2_loss (sum/2)


def test_the_codemods_copy_of_the_module_list_is_the_runtimes() -> None:
    from tfmigrate import hosted

    assert hosted._SLIM_LAYER_MODULES == frozenset(legacy.CONTRIB_LAYER_MODULES)  # noqa: SLF001 - the codemod's copy


def test_contrib_layers_summaries_go_to_its_own_module_and_run() -> None:
    """`tf.contrib.layers.summaries.summarize_activation` is contrib.layers' summaries module
    (tf-slim's `tf_slim.layers.summaries`); slim's `summaries` (`add_scalar_summary`) is another
    module, which both spell alike once contrib.slim folds into contrib.layers. Before, the
    first became `tfm.legacy.slim.summaries.summarize_activation`, which does not exist (tensorflow/tpu
    show_and_tell's image_embedding.py). The migrated calls run in a TF1 graph."""
    from tfmigrate.engine import reference_transform, transform_source

    source = (
        "import tensorflow as tf\nfrom tensorflow.contrib import layers as contrib_layers\nslim = tf.contrib.slim\n\n\n"
        "def summarize(v):\n  contrib_layers.summaries.summarize_activation(v)\n  slim.summaries.add_scalar_summary(v, 'x')\n"
    )
    for migrate in (transform_source, reference_transform):
        output = migrate(source).output
        assert "tfm.legacy.contrib_layers.summaries.summarize_activation(v)" in output, output
        assert "tfm.legacy.slim.summaries.add_scalar_summary(v, 'x')" in output
    namespace: dict = {}
    exec(compile(output, "migrated.py", "exec"), namespace)  # noqa: S102 - the migrated module, run
    with tf.Graph().as_default():
        namespace["summarize"](tf.constant(1.5, name="act"))
        summaries = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.SUMMARIES)
    assert len(summaries) >= 2
