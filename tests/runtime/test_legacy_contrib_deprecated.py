"""`tfm.legacy.contrib_deprecated` (TF 1.x's `tf.contrib.deprecated`) against TF 2.15's functions of the
same name, the ones `tf.contrib.deprecated` re-exported: same summaries, tags as given (no name scope)."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from tfmigrate.runtime import legacy

from .conftest import run_oracle

pytestmark = [pytest.mark.tf, pytest.mark.oracle]

X = np.random.RandomState(0).uniform(size=(2, 4, 4, 1)).astype("float32")

# A TF1 graph: every contrib.deprecated summary inside a name scope, merged by merge_all_summaries
# and by merge_summary, run once; the Summary protos' values (tag, kind, numbers).
_PROGRAM = """
def summaries(tf, dep, x):
    with tf.name_scope("scope"):
        dep.scalar_summary("loss", tf.reduce_mean(x))
        dep.scalar_summary(["a", "b"], tf.constant([1.5, -2.0]))
        dep.histogram_summary("features", x)
        dep.image_summary("img", x, max_images=1)
        dep.audio_summary("wave", tf.reshape(x, [2, 16]), sample_rate=8000, max_outputs=1)
        extra = dep.scalar_summary("extra", tf.reduce_sum(x), collections=["other"])
    merged = dep.merge_all_summaries()
    other = dep.merge_summary(tf.get_collection("other"))
    nothing = dep.merge_all_summaries(key="empty")
    with tf.Session() as session:
        protos = session.run([merged, other])
    out = {"none": nothing is None, "values": []}
    for proto in protos:
        summary = tf.Summary.FromString(proto)
        for value in summary.value:
            kind = value.WhichOneof("value")
            if kind == "simple_value":
                numbers = [value.simple_value]
            elif kind == "histo":
                numbers = [value.histo.min, value.histo.max, value.histo.num, value.histo.sum, value.histo.sum_squares]
            elif kind == "image":
                numbers = [value.image.height, value.image.width, len(value.image.encoded_image_string)]
            else:
                numbers = [value.audio.sample_rate, value.audio.num_channels, value.audio.length_frames]
            out["values"].append([value.tag, kind, numbers])
    return out
"""


@pytest.fixture(scope="module")
def oracle() -> dict:
    return run_oracle(
        _PROGRAM
        + """
import numpy as np
import tensorflow.compat.v1 as tf
from tensorflow.python.ops import logging_ops
tf.disable_eager_execution()
with tf.Graph().as_default():
    out = summaries(tf, logging_ops, tf.constant(np.asarray(PAYLOAD, np.float32)))
print(json.dumps(out))
""",
        X.tolist(),
    )


def test_contrib_deprecated_matches_tf1(oracle: dict) -> None:
    namespace: dict = {}
    exec(_PROGRAM, namespace)  # noqa: S102 - the same program the oracle ran
    v1 = tf.compat.v1
    with tf.Graph().as_default():
        got = namespace["summaries"](v1, legacy.contrib_deprecated, tf.constant(X))
    assert got["none"] is True and oracle["none"] is True
    assert [v[:2] for v in got["values"]] == [v[:2] for v in oracle["values"]]
    assert [v[0] for v in got["values"]][:3] == ["loss", "a", "b"]  # tags as given, not "scope/loss"
    for mine, theirs in zip(got["values"], oracle["values"]):
        np.testing.assert_allclose(mine[2], theirs[2], rtol=1e-6)


def test_contrib_deprecated_exports_what_tf1_did() -> None:
    from tfmigrate import hosted

    assert hosted._CONTRIB_DEPRECATED == frozenset(legacy.CONTRIB_DEPRECATED)  # noqa: SLF001 - the codemod's copy
    assert sorted(name for name in dir(legacy.contrib_deprecated) if not name.startswith("_")) == sorted(
        legacy.CONTRIB_DEPRECATED
    )
