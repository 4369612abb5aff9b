"""`tfmigrate.runtime.lookup` against TF 2.15's graph-mode `lookup_ops` (what `tf.contrib.lookup` exported).

Each case builds one table on both sides and looks up the same keys, in-vocabulary and OOV ones,
comparing ids (or strings), dtypes and `size()`.
"""

from __future__ import annotations

import pytest
import tensorflow as tf

from tfmigrate.runtime import lookup

from .conftest import run_oracle

pytestmark = [pytest.mark.tf, pytest.mark.oracle]

VOCAB = ["emerson", "lake", "palmer", "the", "and"]
WORDS = ["lake", "and", "tarkus", "emerson", "", "palmer", "karn evil 9", "brain salad", "the", "trilogy", "x", "y"]
INT_VOCAB = [42, 7, 1000, -3]
INTS = [7, 8, 42, -3, 0, 123456789, -1, 1000, 5]
# A file with tab-separated columns: word, count, tag.
FILE_LINES = ["emerson\t10\tA", "lake\t20\tB", "palmer\t30\tC", "the\t40\tD", "and\t50\tE"]

# Cases: (name, TF1 expression building `table` from `lookup_ops`/`vocab_path`, keys, key dtype).
# The same expression runs on the runtime with `lookup_ops` = `tfmigrate.runtime.lookup`.
CASES = [
    ("tensor", "lookup_ops.index_table_from_tensor(VOCAB)", WORDS, "string"),
    ("tensor_oov1", "lookup_ops.index_table_from_tensor(VOCAB, num_oov_buckets=1)", WORDS, "string"),
    ("tensor_oov7", "lookup_ops.index_table_from_tensor(VOCAB, num_oov_buckets=7, default_value=-5)", WORDS, "string"),
    # TF1 hashed every key whose id was `default_value` (here "lake", id 1) into a bucket too.
    ("tensor_default_is_an_id", "lookup_ops.index_table_from_tensor(VOCAB, num_oov_buckets=3, default_value=1)", WORDS, "string"),
    ("tensor_default", "lookup_ops.index_table_from_tensor(VOCAB, default_value=17)", WORDS, "string"),
    ("tensor_strong", "lookup_ops.index_table_from_tensor(VOCAB, num_oov_buckets=4, hasher_spec=lookup_ops.StrongHashSpec((1, 2)))", WORDS, "string"),
    ("int64", "lookup_ops.index_table_from_tensor(INT_VOCAB, num_oov_buckets=3, dtype=tf.int64)", INTS, "int64"),
    ("int32", "lookup_ops.index_table_from_tensor(INT_VOCAB, num_oov_buckets=3, dtype=tf.int32)", INTS, "int32"),
    ("int64_no_oov", "lookup_ops.index_table_from_tensor(INT_VOCAB, dtype=tf.int64)", INTS, "int64"),
    ("file", "lookup_ops.index_table_from_file(vocab_path('words'))", WORDS, "string"),
    ("file_oov", "lookup_ops.index_table_from_file(vocab_path('words'), num_oov_buckets=2)", WORDS, "string"),
    ("file_vocab_size", "lookup_ops.index_table_from_file(vocab_path('words'), num_oov_buckets=2, vocab_size=3)", WORDS, "string"),
    ("file_columns", "lookup_ops.index_table_from_file(vocab_path('columns'), num_oov_buckets=1, key_column_index=0, value_column_index=1)", WORDS, "string"),
    ("file_delimiter", "lookup_ops.index_table_from_file(vocab_path('spaced'), key_column_index=2, delimiter=' ', default_value=-2)", ["A", "C", "Z", "E"], "string"),
    ("file_int", "lookup_ops.index_table_from_file(vocab_path('ints'), num_oov_buckets=2, key_dtype=tf.int64)", INTS, "int64"),
    ("to_string", "lookup_ops.index_to_string_table_from_tensor(VOCAB)", [0, 4, 5, -1, 2], "int64"),
    ("to_string_default", "lookup_ops.index_to_string_table_from_tensor(VOCAB, default_value='<unk>')", [3, 9], "int64"),
    ("to_string_file", "lookup_ops.index_to_string_table_from_file(vocab_path('words'))", [0, 4, 5, -1, 2], "int64"),
    ("to_string_file_columns", "lookup_ops.index_to_string_table_from_file(vocab_path('columns'), vocab_size=4, value_column_index=2, default_value='?')", [0, 3, 4, 1], "int64"),
    ("hash_table", "lookup_ops.HashTable(lookup_ops.KeyValueTensorInitializer(VOCAB, [10, 20, 30, 40, 50], value_dtype=tf.int64), -9)", WORDS, "string"),
    ("text_file_initializer", "lookup_ops.HashTable(lookup_ops.TextFileInitializer(vocab_path('columns'), tf.string, 0, tf.int64, 1, delimiter='\\t'), 0)", WORDS, "string"),
    ("id_table_initializer", "lookup_ops.HashTable(lookup_ops.TextFileIdTableInitializer(vocab_path('words')), -1)", WORDS, "string"),
    ("string_table_initializer", "lookup_ops.HashTable(lookup_ops.TextFileStringTableInitializer(vocab_path('words')), 'none')", [1, 7], "int64"),
    ("hash_buckets_only", "lookup_ops.IdTableWithHashBuckets(None, num_oov_buckets=11)", WORDS, "string"),
    ("hash_buckets_int", "lookup_ops.IdTableWithHashBuckets(None, num_oov_buckets=5, key_dtype=tf.int64)", INTS, "int64"),
]


def _files(directory: str) -> dict[str, str]:
    import os

    contents = {
        "words": [line.split("\t")[0] for line in FILE_LINES],
        "columns": FILE_LINES,
        "spaced": [line.replace("\t", " ") for line in FILE_LINES],
        "ints": [str(i) for i in INT_VOCAB],
    }
    paths = {}
    for name, lines in contents.items():
        paths[name] = os.path.join(directory, name + ".txt")
        with open(paths[name], "w") as f:
            f.write("\n".join(lines) + "\n")
    return paths


_ORACLE_PROGRAM = """
import tempfile
import tensorflow.compat.v1 as tf
from tensorflow.python.ops import lookup_ops
tf.disable_eager_execution()
VOCAB, INT_VOCAB = PAYLOAD["vocab"], PAYLOAD["int_vocab"]
directory = tempfile.mkdtemp()
paths = {}
for name, lines in PAYLOAD["files"].items():
    paths[name] = directory + "/" + name + ".txt"
    with open(paths[name], "w") as f:
        f.write("\\n".join(lines) + "\\n")
vocab_path = paths.__getitem__
out = {}
for name, expression, keys, dtype in PAYLOAD["cases"]:
    with tf.Graph().as_default():
        table = eval(expression)
        looked = table.lookup(tf.constant(keys, dtype=getattr(tf, dtype)))
        size = table.size()
        with tf.Session() as s:
            s.run(tf.tables_initializer())
            values, n = s.run([looked, size])
        out[name] = {"values": [v.decode() if isinstance(v, bytes) else int(v) for v in values.tolist()],
                     "dtype": looked.dtype.name, "size": int(n)}
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def oracle() -> dict:
    files = {
        "words": [line.split("\t")[0] for line in FILE_LINES],
        "columns": FILE_LINES,
        "spaced": [line.replace("\t", " ") for line in FILE_LINES],
        "ints": [str(i) for i in INT_VOCAB],
    }
    return run_oracle(_ORACLE_PROGRAM, {"vocab": VOCAB, "int_vocab": INT_VOCAB, "files": files, "cases": CASES})


@pytest.mark.parametrize("name, expression, keys, dtype", CASES, ids=[case[0] for case in CASES])
def test_table_matches_tf1(name, expression, keys, dtype, oracle, tmp_path) -> None:
    vocab_path = _files(str(tmp_path)).__getitem__
    table = eval(expression, {"lookup_ops": lookup, "tf": tf, "VOCAB": VOCAB, "INT_VOCAB": INT_VOCAB, "vocab_path": vocab_path})
    looked = table.lookup(tf.constant(keys, dtype=getattr(tf, dtype)))
    got = [v.decode() if isinstance(v, bytes) else int(v) for v in looked.numpy().tolist()]
    want = oracle[name]
    assert got == want["values"]
    assert looked.dtype.name == want["dtype"]
    assert int(table.size()) == want["size"]


def test_oov_buckets_follow_the_vocabulary() -> None:
    # The buckets are hash % num_oov_buckets after the vocabulary, so every OOV id is in range.
    table = lookup.index_table_from_tensor(VOCAB, num_oov_buckets=3)
    ids = table.lookup(tf.constant(WORDS)).numpy()
    oov = [i for word, i in zip(WORDS, ids) if word not in VOCAB]
    assert all(len(VOCAB) <= i < len(VOCAB) + 3 for i in oov)


def test_sparse_and_ragged_keys() -> None:
    table = lookup.index_table_from_tensor(VOCAB, num_oov_buckets=2)
    dense = table.lookup(tf.constant(["lake", "tarkus", "the"])).numpy().tolist()
    sparse = tf.SparseTensor([[0, 0], [0, 2], [1, 1]], tf.constant(["lake", "tarkus", "the"]), [2, 3])
    looked = table.lookup(sparse)
    assert isinstance(looked, tf.SparseTensor) and looked.values.numpy().tolist() == dense
    ragged = table.lookup(tf.ragged.constant([["lake"], ["tarkus", "the"]]))
    assert isinstance(ragged, tf.RaggedTensor) and ragged.flat_values.numpy().tolist() == dense


def test_tables_work_inside_a_dataset_map() -> None:
    table = lookup.index_table_from_tensor(VOCAB, num_oov_buckets=1)
    ids = tf.data.Dataset.from_tensor_slices(["the", "nope"]).map(table.lookup)
    assert [int(i) for i in ids] == [3, 5]


def test_tables_initializer_is_a_no_op_eagerly_and_initializes_in_a_graph() -> None:
    assert lookup.tables_initializer() is None
    with tf.Graph().as_default():
        table = lookup.index_table_from_tensor(VOCAB, num_oov_buckets=1)
        ids = table.lookup(tf.constant(["palmer", "tarkus"]))
        with tf.compat.v1.Session() as session:
            session.run(lookup.tables_initializer())
            assert session.run(ids).tolist() == [2, 5]
    table = lookup.index_to_string_table_from_tensor(VOCAB)
    assert table.init is table.initializer
    assert table.lookup(tf.constant([1], tf.int64)).numpy().tolist() == [b"lake"]


def test_contribs_mapping_keyword_is_the_vocabulary() -> None:
    # `tf.contrib.lookup.index_table_from_tensor(mapping=...)` (google-research/language's inputs)
    # and its string twin named the vocabulary `mapping`; `tf.compat.v1.lookup`, `vocabulary_list`.
    by_mapping = lookup.index_table_from_tensor(mapping=tf.constant(VOCAB), num_oov_buckets=1)
    by_list = lookup.index_table_from_tensor(vocabulary_list=tf.constant(VOCAB), num_oov_buckets=1)
    keys = tf.constant(WORDS)
    assert by_mapping.lookup(keys).numpy().tolist() == by_list.lookup(keys).numpy().tolist()
    strings = lookup.index_to_string_table_from_tensor(mapping=VOCAB, default_value="?")
    assert strings.lookup(tf.constant([2, 9], tf.int64)).numpy().tolist() == [b"palmer", b"?"]
    with pytest.raises(TypeError, match="same argument"):
        lookup.index_table_from_tensor(VOCAB, mapping=VOCAB)
