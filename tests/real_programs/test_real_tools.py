"""Published TF1 command-line tools, migrated and run against the oracle.

- tensor2tensor's `utils/avg_checkpoints.py` (tensor2tensor==1.15.7 from PyPI, as `packages.py`
  fetches it) averages the variables of some checkpoints by feeding placeholders in a
  `tf.Session`: TF 1.x graph code that fails under TF2's eager default. Migrated alone (a file,
  not its package), it must run on current TF and write the checkpoint the original writes on
  the oracle: every variable equal.
- BERT's `extract_features.py` (bert-tensorflow==1.0.4) runs a predict-only TPUEstimator over a
  text file and writes each token's top-layer activations as JSON lines. The whole package is
  migrated (the program reads `modeling` and `tokenization`); from the same checkpoint the
  migrated program must write the tokens and values the original writes on the oracle.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from equivalence.oracle import oracle_python, quiet_env

from . import inputs
from .packages import package_dir

pytestmark = [pytest.mark.oracle, pytest.mark.tf, pytest.mark.slow]

LAUNCHER = Path(__file__).parent / "tf1_launcher.py"
TFMIGRATE = [sys.executable, "-c", "from tfmigrate.cli import entry; entry()"]


def _checkpoints(directory: Path) -> list[str]:
    """Two checkpoints of the same variables (a matrix, a vector, an int step) with other values."""
    import tensorflow as tf

    paths = []
    for index, scale in enumerate((1.0, -3.0)):
        with tf.Graph().as_default():
            tf.compat.v1.get_variable("dense/kernel", initializer=np.arange(6, dtype=np.float32).reshape(2, 3) * scale)
            tf.compat.v1.get_variable("dense/bias", initializer=np.full([3], 0.5 * scale, np.float32))
            step = tf.compat.v1.train.get_or_create_global_step()
            (directory / f"run{index}").mkdir(parents=True)
            with tf.compat.v1.Session() as session:
                session.run(tf.compat.v1.global_variables_initializer())
                session.run(step.assign(10 * (index + 1)))
                paths.append(tf.compat.v1.train.Saver().save(session, str(directory / f"run{index}" / "model.ckpt"), global_step=step))
    return paths


def _variables(directory: Path) -> dict[str, np.ndarray]:
    import tensorflow as tf

    path = tf.train.latest_checkpoint(str(directory))
    assert path is not None, f"no checkpoint in {directory}"
    reader = tf.train.load_checkpoint(path)
    return {name: reader.get_tensor(name) for name, _ in tf.train.list_variables(path)}


def test_tensor2tensor_avg_checkpoints_migrated_writes_the_originals_average(tmp_path: Path) -> None:
    original, migrated = tmp_path / "original", tmp_path / "migrated"
    original.mkdir()
    shutil.copy(package_dir("tensor2tensor") / "utils" / "avg_checkpoints.py", original / "avg_checkpoints.py")
    run = subprocess.run([*TFMIGRATE, str(original / "avg_checkpoints.py"), "--out-dir", str(migrated)],
                         capture_output=True, text=True, cwd=tmp_path)
    assert "(0 TODOs left)" in run.stdout, run.stdout + run.stderr
    assert "tf.compat.v1.disable_v2_behavior()" in (migrated / "avg_checkpoints.py").read_text(encoding="utf-8")
    paths = _checkpoints(tmp_path / "checkpoints")
    for python, program, cwd in ((oracle_python(), [str(LAUNCHER), "avg_checkpoints.py"], original),
                                 (sys.executable, ["avg_checkpoints.py"], migrated)):
        done = subprocess.run([str(python), *program, "--checkpoints", ",".join(paths), "--output_path", str(cwd / "avg" / "averaged.ckpt")],
                              cwd=cwd, capture_output=True, text=True, env=quiet_env(), timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
    want, got = _variables(original / "avg"), _variables(migrated / "avg")
    assert sorted(want) == sorted(got) == ["dense/bias", "dense/kernel", "global_step"]
    np.testing.assert_allclose(want["dense/kernel"], np.arange(6).reshape(2, 3) * -1.0)  # the mean of x1 and x-3
    for name in want:
        np.testing.assert_array_equal(got[name], want[name], err_msg=name)


# A BERT checkpoint for the config `inputs.write_bert_config` writes, made on the oracle through
# the launcher (`import tensorflow` there is TF 1.x's, seeded), from the package's own `modeling`.
_BERT_CHECKPOINT = """
import sys
import tensorflow as tf
from bert import modeling

config = modeling.BertConfig.from_json_file(sys.argv[1])
modeling.BertModel(config, is_training=False, input_ids=tf.placeholder(tf.int32, [1, 8]))
with tf.Session() as session:
    session.run(tf.global_variables_initializer())
    tf.train.Saver().save(session, sys.argv[2])
"""


def _features(path: Path) -> list[dict]:
    import json

    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_bert_extract_features_migrated_writes_the_originals_features(tmp_path: Path) -> None:
    import json

    bert = package_dir("bert")
    migrated = tmp_path / "migrated"
    run = subprocess.run([*TFMIGRATE, str(bert), "--out-dir", str(migrated / "bert")], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode in (0, 1), run.stdout + run.stderr
    # (the model_fn kept as written, hosted by a Keras model in the program's strategy)
    assert "tfm.ModelFnModel(model_fn," in (migrated / "bert" / "extract_features.py").read_text(encoding="utf-8")
    vocab = inputs.write_vocab(tmp_path / "vocab.txt")
    config = inputs.write_bert_config(tmp_path / "bert_config.json", inputs.vocab_size(vocab))
    text = tmp_path / "input.txt"
    text.write_text("the city was new ||| a king of the river\nmusic is a game\n", encoding="utf-8")
    env = {**quiet_env(), "TF1_LAUNCHER_SEED": "20260101"}
    script = tmp_path / "make_checkpoint.py"
    script.write_text(_BERT_CHECKPOINT, encoding="utf-8")
    checkpoint = tmp_path / "ckpt" / "bert.ckpt"
    made = subprocess.run([str(oracle_python()), str(LAUNCHER), str(script), str(config), str(checkpoint)], cwd=tmp_path,
                          capture_output=True, text=True, env={**env, "PYTHONPATH": str(bert.parent)}, timeout=600)
    assert made.returncode == 0, made.stderr[-3000:]
    flags = [f"--input_file={text}", f"--vocab_file={vocab}", f"--bert_config_file={config}",
             f"--init_checkpoint={checkpoint}", "--layers=-1,-2", "--max_seq_length=16", "--batch_size=2",
             "--do_lower_case=true", "--use_tpu=false"]
    outputs = {}
    for side, python, program, parent in (
        ("original", oracle_python(), [str(LAUNCHER), str(bert / "extract_features.py")], bert.parent),
        ("migrated", sys.executable, [str(migrated / "bert" / "extract_features.py")], migrated),
    ):
        outputs[side] = tmp_path / f"{side}.jsonl"
        done = subprocess.run([str(python), *program, *flags, f"--output_file={outputs[side]}"], cwd=tmp_path,
                              capture_output=True, text=True, env={**env, "PYTHONPATH": str(parent)}, timeout=600)
        assert done.returncode == 0, f"{side}:\n{done.stderr[-3000:]}"
    want, got = _features(outputs["original"]), _features(outputs["migrated"])
    assert [w["linex_index"] for w in want] == [0, 1]
    assert json.dumps([[t["token"] for t in w["features"]] for w in want]) == json.dumps(
        [[t["token"] for t in g["features"]] for g in got])
    for w, g in zip(want, got):
        for wt, gt in zip(w["features"], g["features"]):
            assert [layer["index"] for layer in wt["layers"]] == [layer["index"] for layer in gt["layers"]] == [-1, -2]
            for wl, gl in zip(wt["layers"], gt["layers"]):
                values = np.asarray(wl["values"])
                assert np.abs(values).max() > 0.1  # activations, not zeros
                np.testing.assert_allclose(gl["values"], values, rtol=1e-5, atol=1e-5 * np.abs(values).max(), err_msg=wt["token"])
