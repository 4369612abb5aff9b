"""The generated TF1 -> TF2 symbol tables (rules/data/*.json) load and say what TF's metadata says.

Runs without TensorFlow: it only reads the JSON written by scripts/gen_api_table.py. Every
spot-checked value below was read off TF 2.15.1's tf_export metadata (and, for the
`v2_absent_in_current_tf` / tf2_api_paths checks, TF 2.21.0 + Keras 3.15.1) -- none is a guess.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parent.parent / "rules" / "data"
TABLE_PATH = DATA / "tf_api_v1_to_v2.json"
PATHS_PATH = DATA / "tf2_api_paths.json"


@pytest.fixture(scope="module")
def table() -> dict:
    return json.loads(TABLE_PATH.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def symbols(table) -> dict:
    return table["symbols"]


@pytest.fixture(scope="module")
def absent(table) -> set:
    return set(table["v2_absent_in_current_tf"])


@pytest.fixture(scope="module")
def tf2_paths() -> list:
    return json.loads(PATHS_PATH.read_text(encoding="utf-8"))["paths"]


def _mentioned_v2_names(table: dict) -> set:
    names = {v for v in table["symbols"].values() if v}
    for alts in table["v2_alternatives"].values():
        names.update(alts)
    names.update(table["v2_same_name_other_symbol"])
    names.update(table["tf_upgrade_v2_renames"].values())
    return names


# ----------------------------------------------------------------------------- shape of the table


def test_table_loads_with_expected_sections(table):
    for key in ("generated_by", "tensorflow_version", "symbols", "v2_absent_in_current_tf",
                "v2_alternatives", "v2_same_name_other_symbol", "tf_upgrade_v2_renames",
                "v1_non_api_modules", "current_tensorflow_version"):
        assert key in table, key
    assert table["generated_by"] == "scripts/gen_api_table.py"
    assert table["tensorflow_version"] == "2.15.1"
    assert table["current_tensorflow_version"].startswith("2.")


def test_many_thousands_of_entries(symbols):
    assert len(symbols) >= 4000
    with_v2 = [k for k, v in symbols.items() if v is not None]
    v1_only = [k for k, v in symbols.items() if v is None]
    assert len(with_v2) >= 3000
    assert len(v1_only) >= 500


def test_stable_sorted_output(table, symbols):
    # Deterministic: sorted keys everywhere, sorted lists, one trailing newline.
    assert list(symbols) == sorted(symbols)
    assert list(table) == sorted(table)
    assert table["v2_absent_in_current_tf"] == sorted(set(table["v2_absent_in_current_tf"]))
    assert table["v2_same_name_other_symbol"] == sorted(table["v2_same_name_other_symbol"])
    text = TABLE_PATH.read_text(encoding="utf-8")
    assert text.endswith("}\n") and not text.endswith("\n\n")


def test_values_are_v2_paths_or_null(symbols):
    for v1, v2 in symbols.items():
        assert not v1.startswith(("compat.", "tf.")), v1
        assert v2 is None or (isinstance(v2, str) and v2 and not v2.startswith(("tf.", "compat.v1."))), (v1, v2)


def test_alternatives_start_with_the_preferred_name(symbols, table):
    for v1, alts in table["v2_alternatives"].items():
        assert len(alts) > 1 and len(set(alts)) == len(alts)
        assert symbols[v1] == alts[0], v1


# ---------------------------------------------------------------------- facts from the metadata


@pytest.mark.parametrize("v1, v2", [
    ("nn.relu", "nn.relu"),
    ("reshape", "reshape"),
    ("cast", "cast"),
    ("gfile.GFile", "io.gfile.GFile"),
    ("io.gfile.exists", "io.gfile.exists"),
    ("random_normal", "random.normal"),
    ("where_v2", "where"),
    ("add", "math.add"),                 # tf_export("math.add", "add"): canonical first name
    ("dimension_value", "compat.dimension_value"),  # its only v2 name is under compat.
    ("feature_column.numeric_column", "feature_column.numeric_column"),
    ("distribute.cluster_resolver.TPUClusterResolver", "distribute.cluster_resolver.TPUClusterResolver"),
    ("keras.layers.Dense", "keras.layers.Dense"),
    ("keras.Model", "keras.Model"),
    ("keras.optimizers.Adam", "keras.optimizers.legacy.Adam"),  # Keras 2.15 v1 Adam = legacy
    ("train.SessionRunHook", "estimator.SessionRunHook"),       # v2 name only via the estimator API
    # constants (from the _tf_api_constants lists)
    ("float32", "dtypes.float32"),
    ("newaxis", "newaxis"),
    ("saved_model.tag_constants.SERVING", "saved_model.SERVING"),
    ("data.experimental.AUTOTUNE", "data.AUTOTUNE"),
])
def test_v1_symbol_with_v2_name(symbols, v1, v2):
    assert symbols[v1] == v2


@pytest.mark.parametrize("v1", [
    # v1-only in the metadata: no TF2 name at all.
    "to_float", "layers.dense", "layers.Dense", "train.AdamOptimizer", "train.Saver",
    "train.exponential_decay", "train.MonitoredTrainingSession", "Session", "placeholder",
    "get_variable", "variable_scope", "global_variables_initializer", "AUTO_REUSE",
    "losses.mean_squared_error", "metrics.accuracy", "summary.scalar", "logging.info",
    "logging.INFO", "app.run", "estimator.tpu.TPUEstimator", "tpu.CrossShardOptimizer",
    "nn.rnn_cell.LSTMCell", "initializers.glorot_uniform",
    # A different (v1) object than the v2 symbol of the same name: also null.
    "data.Dataset", "gfile.Exists", "Variable", "nn.conv2d", "estimator.Estimator",
])
def test_v1_only_symbol_maps_to_null(symbols, v1):
    assert v1 in symbols
    assert symbols[v1] is None


def test_estimator_tpu_symbols_present(symbols):
    for name in ("estimator.tpu.TPUEstimator", "estimator.tpu.TPUEstimatorSpec",
                 "estimator.tpu.RunConfig", "estimator.tpu.TPUConfig"):
        assert name in symbols


def test_same_name_other_symbol(table):
    same = set(table["v2_same_name_other_symbol"])
    for name in ("data.Dataset", "Variable", "nn.conv2d", "estimator.Estimator"):
        assert name in same
    assert "to_float" not in same and "Session" not in same
    assert all(table["symbols"][p] is None for p in same)


def test_tf_upgrade_v2_renames(table):
    renames = table["tf_upgrade_v2_renames"]
    assert renames["gfile.Exists"] == "io.gfile.exists"
    assert renames["image.resize_images"] == "image.resize"
    assert renames["multinomial"] == "random.categorical"
    # tf_upgrade_v2 sends to_float to compat.v1 (and rewrites calls to tf.cast): no rename here.
    assert "to_float" not in renames
    assert all(table["symbols"][p] is None for p in renames)
    assert not any(t.startswith("compat.v1.") for t in renames.values())


def test_non_api_modules(table):
    assert table["v1_non_api_modules"] == {
        "app.flags": "tensorflow.python.platform.flags",
        "flags": "tensorflow.python.platform.flags",
        "test.mock": "unittest.mock",
    }
    assert table["v1_without_metadata"] == []


# ------------------------------------------------------------------------------ current TF check


def test_common_targets_resolve_on_current_tf(symbols, absent):
    for v1 in ("nn.relu", "reshape", "cast", "gfile.GFile", "float32", "keras.layers.Dense"):
        assert symbols[v1] not in absent, v1
    for v2 in ("nn.relu", "reshape", "data.Dataset", "io.gfile.exists", "Variable", "nn.conv2d"):
        assert v2 not in absent, v2


def test_removed_namespaces_are_absent(table, absent):
    mentioned = _mentioned_v2_names(table)
    assert absent <= mentioned
    # tf.estimator is gone from current TF: every estimator.* v2 name is absent.
    estimator = {n for n in mentioned if n.startswith("estimator.")}
    assert estimator and estimator <= absent
    assert "estimator.SessionRunHook" in absent
    assert "keras.layers.DenseFeatures" in absent


def test_every_resolving_v2_name_is_a_listed_tf2_path(table, absent, tf2_paths):
    listed = set(tf2_paths)
    missing = sorted(n for n in _mentioned_v2_names(table) - absent if n not in listed)
    assert missing == []
    assert not (absent & listed)


# --------------------------------------------------------------------------- tf2_api_paths.json


def test_tf2_api_paths(tf2_paths):
    doc = json.loads(PATHS_PATH.read_text(encoding="utf-8"))
    assert doc["generated_by"] == "scripts/gen_api_table.py"
    assert doc["tensorflow_version"].startswith("2.")
    assert PATHS_PATH.stat().st_size < 2 * 1024 * 1024
    assert TABLE_PATH.stat().st_size < 2 * 1024 * 1024
    assert tf2_paths == sorted(set(tf2_paths))
    assert len(tf2_paths) >= 4000
    for path in ("nn", "nn.relu", "reshape", "float32", "newaxis", "data.Dataset", "io.gfile.exists",
                 "distribute.TPUStrategy", "keras", "keras.layers.Dense", "keras.Model",
                 "keras.optimizers.Adam", "compat.v1", "__version__"):
        assert path in tf2_paths, path
    assert not any(p.startswith(("compat.v1.", "compat.v2.", "estimator")) for p in tf2_paths)
    assert not any(".src." in p or p.startswith("keras.src") for p in tf2_paths)


def test_an_unmigrated_v2_estimator_keeps_its_v2_spelling():
    """A canned estimator no rule migrates in place (passed on) is the hosted tier's, with the
    flavour its spelling had: `tf.estimator.X` in TF2 code is the v2 class (v2 head, Keras
    optimizers), `tf.compat.v1.estimator.X` the v1 one."""
    source = (
        "import tensorflow as tf\n\n"
        "def build(make):\n"
        "  return make(tf.estimator.BaselineClassifier(n_classes=3), tf.compat.v1.estimator.BaselineRegressor())\n"
    )
    from tfmigrate.engine import transform_source

    out = transform_source(source, filename="x.py").output
    assert (
        'make(tfm.estimator.BaselineClassifier(n_classes=3, api="v2"), tfm.estimator.BaselineRegressor(api="v1"))' in out
    )
    assert "# tfmigrate: this canned estimator is `tfm.estimator`'s" in out and "TODO" not in out
    assert transform_source(out, filename="x.py").output == out


def test_v1_members_absent_in_v2(table):
    members = table["v1_members_absent_in_v2"]
    assert {"from_session", "from_frozen_graph", "from_keras_model_file"} <= set(members["lite.TFLiteConverter"])
    assert "from_saved_model" not in members["lite.TFLiteConverter"]  # both classes have it
    assert {"from_structure", "from_string_handle"} <= set(members["data.Iterator"])
    assert all(members[path] == sorted(members[path]) for path in members)


@pytest.mark.tf
def test_v1_members_absent_in_v2_hold_on_current_tf(table):
    """Each member listed resolves on TF1's class (`tf.compat.v1.<path>.<member>`) and not on the
    class its TF2 name denotes."""
    import tensorflow as tf
    from tfmigrate.tf_api import v2_name

    def lookup(root, path):
        for part in path.split("."):
            root = getattr(root, part)
        return root

    for path, names in table["v1_members_absent_in_v2"].items():
        v1_class, v2_class = lookup(tf.compat.v1, path), lookup(tf, v2_name(path))
        for name in names:
            assert hasattr(v1_class, name) and not hasattr(v2_class, name), (path, name)


@pytest.mark.parametrize(("source", "expected"), [
    # (the TF1 import respelled, the class's TF1-only member read off it: TF1's class)
    ("import tensorflow.compat.v1 as tf\nc = tf.lite.TFLiteConverter.from_session(s, [a], [b])\n",
     "c = tf.compat.v1.lite.TFLiteConverter.from_session(s, [a], [b])\n"),
    ("import tensorflow.compat.v1 as tf\nc = tf.lite.TFLiteConverter.from_saved_model(d)\n",
     "c = tf.lite.TFLiteConverter.from_saved_model(d)\n"),
    ("import tensorflow as tf\nsess = tf.Session()\nit = tf.data.Iterator.from_structure(types, shapes)\n",
     "it = tf.compat.v1.data.Iterator.from_structure(types, shapes)\n"),
    # `Iterator.from_structure` is TF 1.x API alone (TF2's Iterator never had it, 2.15's neither): a
    # file spelling it is read as TF 1.x code (`tf1_program`), whatever else it spells
    ("import tensorflow as tf\nit = tf.data.Iterator.from_structure(types, shapes)\n",
     "it = tf.compat.v1.data.Iterator.from_structure(types, shapes)\n"),
    # TF2 code (no TF 1.x in the file): its own spelling of a member TF2's class has is left alone
    ("import tensorflow as tf\nc = tf.lite.TFLiteConverter.from_saved_model(d)\n",
     "c = tf.lite.TFLiteConverter.from_saved_model(d)\n"),
])
def test_a_tf1_only_member_of_a_renamed_class_stays_tf1s(source: str, expected: str) -> None:
    from tfmigrate.engine import reference_transform, transform_source

    for migrate in (transform_source, reference_transform):
        output = migrate(source).output
        assert expected in output, output
        assert migrate(output).output == output


@pytest.mark.parametrize(("source", "expected"), [
    # pre-1.0 names, in no TF 1.x's API: a TODO (respelled off the TF2 import where the import is)
    ("import tensorflow.compat.v1 as tf\nm = tf.merge_all_summaries()\n",
     "# TODO(tfmigrate TFM101): `tf.merge_all_summaries` is in neither TF2's API nor TF 1.x's exported API"),
    ("import tensorflow as tf\ns = tf.Session()\nw = tf.train.SummaryWriter(d)\n",
     "# TODO(tfmigrate TFM101): `tf.train.SummaryWriter` is in neither"),
    # TF 1.x's plain module `tf.test.mock` (unittest.mock), which only compat.v1 keeps
    ("import tensorflow.compat.v1 as tf\nx = tf.test.mock.MagicMock()\n", "x = tf.compat.v1.test.mock.MagicMock()\n"),
])
def test_names_no_tf_has_get_a_todo_and_tf1s_plain_modules_stay_tf1s(source: str, expected: str) -> None:
    from tfmigrate.engine import reference_transform, transform_source

    for migrate in (transform_source, reference_transform):
        result = migrate(source)
        assert expected in result.output, result.output
        assert migrate(result.output).output == result.output


def test_names_the_table_knows_or_tf_keeps_private_get_no_todo() -> None:
    from tfmigrate.tf_api import known_path

    for path in ("nn.relu", "nn", "summary.scalar", "lite.python.lite.TFLiteConverter", "python.ops.array_ops.where",
                 "core.protobuf.config_pb2", "__version__", "test.mock.patch", "data.experimental.AUTOTUNE"):
        assert known_path(path), path
    for path in ("merge_all_summaries", "train.SummaryWriter", "summary.always_record_summaries", "examples.tutorials",
                 "lite.TFLiteConverterV9"):
        assert not known_path(path), path


def test_a_contrib_module_whose_tf2_home_lacks_the_name_gets_a_todo() -> None:
    """`tf.contrib.framework.nest` is TF2's `tf.nest`, which lacks some of its functions
    (`is_sequence`, `map_structure_up_to`: dm-sonnet 1.36's `nest.py`). Those were respelled to
    `tf.nest.is_sequence`, an AttributeError on TF2, with no TODO; now they keep their spelling and
    get one. The names `tf.nest` has are respelled as before."""
    from tfmigrate.engine import reference_transform, transform_source

    source = (
        "import tensorflow.compat.v1 as tf\n\n\ndef f(a, b):\n  x = tf.contrib.framework.nest.flatten(a)\n"
        "  return tf.contrib.framework.nest.map_structure_up_to(a, f, b), x\n"
    )
    for migrate in (transform_source, reference_transform):
        output = migrate(source).output
        assert "  x = tf.nest.flatten(a)\n" in output
        assert ("# TODO(tfmigrate TFM101): TF2's `tf.nest` has no `map_structure_up_to` "
                "(`tf.contrib.framework.nest.map_structure_up_to`)") in output, output
        assert "tf.nest.map_structure_up_to" not in output
        assert migrate(output).output == output


@pytest.mark.parametrize(("source", "expected", "todo"), [
    # read off TF's API module: an AttributeError on TF2, whichever import bound `tensorflow`
    ("import tensorflow as tf\nx = tf.python.ops.array_ops.identity(y)\n", "x = tf.python.ops.array_ops.identity(y)\n", True),
    ("import tensorflow.compat.v1 as tf\nx = tf.python.ops.array_ops.identity(y)\n", "x = tf.python.ops.array_ops.identity(y)\n", True),
    ("import tensorflow.python.ops.array_ops\nx = tensorflow.python.ops.array_ops.identity(y)\n",
     "import tensorflow.python.ops.array_ops\n", True),
    # imported from the package itself: works on TF2, left alone
    ("import tensorflow as tf\nfrom tensorflow.python.ops import array_ops\nx = array_ops.identity(tf.ones([1]))\n",
     "from tensorflow.python.ops import array_ops\nx = array_ops.identity(tf.ones([1]))\n", False),
    # through compat.v1 (tensorflow/tpu's retinanet_tensorrt.py): the package's own module, uses left as written
    ("import tensorflow.compat.v1 as tf\nfrom tensorflow.compat.v1.python.saved_model import loader\n"
     "m = loader.load(tf.Session(), ['serve'], d)\n",
     "from tensorflow.python.saved_model import loader\n", False),
    ("import tensorflow.compat.v1.python.saved_model.loader as loader\nm = loader.load(s, ['serve'], d)\n",
     "import tensorflow.python.saved_model.loader as loader\nm = loader.load(s, ['serve'], d)\n", False),
])
def test_tfs_implementation_package_is_imported_from_itself_not_read_off_tf(source: str, expected: str, todo: bool) -> None:
    """TF 1.x's `tf` had its implementation package as `tf.python`; TF2's `tensorflow` has no
    `python` attribute, even after `import tensorflow.python.X`. retinanet_tensorrt.py's `from
    tensorflow.compat.v1.python.saved_model import loader` (no such module on TF2) was inlined to
    `tf.python.saved_model.loader.load` and the file reported migrated fully."""
    from tfmigrate.engine import reference_transform, transform_source

    for migrate in (transform_source, reference_transform):
        result = migrate(source)
        assert expected in result.output, result.output
        assert ("# TODO(tfmigrate TFM101): TF2's `tf` has no `python`" in result.output) is todo, result.output
        assert "tensorflow.compat.v1.python" not in result.output
        assert todo or "tf.python" not in result.output
        assert migrate(result.output).output == result.output


@pytest.mark.tf
def test_tf2s_tensorflow_has_no_python_attribute_and_its_modules_import() -> None:
    import importlib

    import tensorflow as tf

    importlib.import_module("tensorflow.python.ops.array_ops")
    assert not hasattr(tf, "python") and not hasattr(tf.compat.v1, "python")
    assert callable(importlib.import_module("tensorflow.python.saved_model.loader").load)
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("tensorflow.compat.v1.python.saved_model.loader")


@pytest.mark.parametrize(("source", "expected", "todo"), [
    # Estimator's modules read as values (OpenNMT-tf 1.25's `hasattr(tf.estimator, "BestExporter")`): the hosted namespace's
    ("import tensorflow as tf\nok = hasattr(tf.estimator, 'BestExporter')\n", "ok = hasattr(tfm.estimator, 'BestExporter')\n", None),
    ("import tensorflow.compat.v1 as tf\nm = tf.estimator.tpu\n", "m = tfm.estimator.tpu\n", None),
    ("import tensorflow as tf\nm = tf.compat.v2.estimator\n", "m = tfm.estimator\n", None),
    # an Estimator name the hosted namespace lacks, in TF2-spelled code: it was left with no TODO
    ("import tensorflow as tf\nok = isinstance(e, tf.estimator.BoostedTreesClassifier)\n",
     "ok = isinstance(e, tf.estimator.BoostedTreesClassifier)\n",
     "tf.estimator was removed in TF 2.16 (`tf.estimator.BoostedTreesClassifier`)"),
    ("import tensorflow.compat.v1 as tf\nok = isinstance(e, tf.estimator.BoostedTreesClassifier)\n",
     "ok = isinstance(e, tf.compat.v1.estimator.BoostedTreesClassifier)\n",
     "tf.estimator was removed in TF 2.16 (`tf.compat.v1.estimator.BoostedTreesClassifier`)"),
    # `import tensorflow.contrib as tc` (stable-baselines 2.10's ddpg.py): dropped once its uses are respelled ...
    ("import tensorflow as tf\nimport tensorflow.contrib as tc\nr = tc.layers.l2_regularizer(0.1)\n",
     "import tfmigrate.runtime as tfm\n\nr = tfm.legacy.slim.l2_regularizer(0.1)\n", None),
    # ... and where a use is kept, the import has its own TODO (it fails at import on TF2)
    ("import tensorflow as tf\nimport tensorflow.contrib.rnn as rnn\nc = rnn.FooCell(3)\n",
     "import tensorflow.contrib.rnn as rnn\n", "(`import tensorflow.contrib.rnn as rnn`)"),
])
def test_estimator_and_contrib_modules_read_as_values(source: str, expected: str, todo: str | None) -> None:
    from tfmigrate.engine import reference_transform, transform_source

    for migrate in (transform_source, reference_transform):
        result = migrate(source)
        assert expected in result.output, result.output
        assert (todo is None) == ("TODO(tfmigrate" not in result.output), result.output
        assert todo is None or todo in result.output, result.output
        assert "import tensorflow.contrib as tc" not in result.output
        assert migrate(result.output).output == result.output


@pytest.mark.parametrize("name", ["DNNEstimator", "BoostedTreesClassifier"])
def test_an_estimator_site_rules_todo_is_the_only_one_on_its_statement(name: str) -> None:
    """TFM401 says what to do with a canned estimator it cannot migrate; TFM101's "tf.estimator was
    removed" TODO on the same constructor is left out there (it was written as a second TODO)."""
    from tfmigrate.engine import reference_transform, transform_source

    source = (f"import tensorflow as tf\n\n\ndef main(cols, head, input_fn):\n  e = tf.estimator.{name}(head=head, feature_columns=cols)\n"
              "  e.train(input_fn=input_fn, steps=2)\n")
    for migrate in (transform_source, reference_transform):
        result = migrate(source)
        assert [todo.code for todo in result.todos] == ["TFM401"], result.output
        assert migrate(result.output).output == result.output


def test_same_argument_renames_are_renames_the_table_holds(table) -> None:
    """`tf_api.SAME_ARGUMENT_RENAMED` lists slots of `v1_signature_changes` renamed outright; an
    entry the table no longer has would let a call keep TF2's name on no evidence."""
    from tfmigrate.tf_api import SAME_ARGUMENT_RENAMED

    renamed = set()
    for change in table["v1_signature_changes"].values():
        renamed.update((old, new) for old, new in zip(change["v1"], change["v2"]) if old != new)
    assert SAME_ARGUMENT_RENAMED <= renamed
