"""Exported SavedModels: the migration's serve like the TF1 program's.

The train_and_evaluate fixture exports with `export_saved_model` and with Latest/Final/Best
exporters; the receiver-alternatives fixture exports a receiver with
`receiver_tensors_alternatives` (signatures `<alternative>:<output>`). Each original runs on the oracle (TF 2.15 + Estimator), its migration on current TF; a
loader script then reads each TF1 SavedModel on the oracle and the matching TF2 one on current
TF, and the two must agree on signature names, method names, input keys/dtypes/shapes, output
keys, and outputs on the same inputs (within 1e-5).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Callable

import pytest

from conftest import FIXTURES
from tfmigrate.engine import Options, transform_source

from . import forked
from .harness import run_program
from .oracle import oracle_python, oracle_run_env, quiet_env

pytestmark = [pytest.mark.oracle, pytest.mark.tf]

# Each program, and the export directories (under its working directory) it writes.
CASES = {
    "exporters": (
        FIXTURES / "TFM301_tpu_estimator_to_keras" / "train_and_evaluate_exporters.in.py",
        ("tae/direct", "tae/export/final", "tae/export/best", "tae/export/latest"),
    ),
    "receiver_alternatives": (
        FIXTURES / "TFM201_estimator_to_keras" / "serving_receiver_alternatives.in.py",
        ("alternatives/export",),
    ),
}

LOADER = r'''
import json, sys
import numpy as np
import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2

path = sys.argv[1]
proto = saved_model_pb2.SavedModel()
with open(path + "/saved_model.pb", "rb") as f:
    proto.ParseFromString(f.read())
graph = next(m for m in proto.meta_graphs if list(m.meta_info_def.tags) == ["serve"])
rng = np.random.RandomState(5)
rows = rng.normal(size=(5, 4)).astype(np.float32)
examples = [tf.train.Example(features=tf.train.Features(feature={
    "x": tf.train.Feature(float_list=tf.train.FloatList(value=row))})).SerializeToString() for row in rows]
loaded = tf.saved_model.load(path, tags=["serve"])
out = {}
for name in sorted(loaded.signatures):
    fn = loaded.signatures[name]
    specs = fn.structured_input_signature[1]
    inputs = {k: tf.constant(examples) if s.dtype == tf.string else tf.constant(rows) for k, s in specs.items()}
    results = fn(**inputs)
    out[name] = {
        "method": graph.signature_def[name].method_name,
        "inputs": {k: [s.dtype.name, [d for d in s.shape.as_list()]] for k, s in sorted(specs.items())},
        "outputs": {k: np.asarray(v.numpy(), np.float64).tolist() for k, v in sorted(results.items())},
    }
print("LOADED " + json.dumps(out, sort_keys=True))
'''


def _load(python: str | Path, export: Path, cwd: Path) -> dict:
    script = cwd / "load_savedmodel.py"
    script.write_text(LOADER, encoding="utf-8")
    proc = forked.run(python, [str(script), str(export)], cwd, quiet_env(), 300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    line = next(l for l in proc.stdout.splitlines() if l.startswith("LOADED "))
    return json.loads(line[len("LOADED "):])


def _only_export(base: Path) -> Path:
    versions = sorted(p for p in base.iterdir() if p.name.isdigit())
    assert versions, f"no export under {base}"
    return versions[-1]


def _close(a, b, where: str, problems: list[str]) -> None:
    if isinstance(a, list):
        if not isinstance(b, list) or len(a) != len(b):
            problems.append(f"{where}: shapes differ")
            return
        for i, (x, y) in enumerate(zip(a, b)):
            _close(x, y, f"{where}[{i}]", problems)
        return
    if abs(a - b) > 1e-5 * max(abs(a), abs(b)) + 1e-7:
        problems.append(f"{where}: {a!r} (TF1) vs {b!r} (migrated)")


@pytest.fixture(scope="module")
def original_dirs(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """Each TF1 program run once on the oracle (on first use), for both targets."""
    done: dict[str, Path] = {}

    def original_dir(case: str) -> Path:
        if case not in done:
            directory = tmp_path_factory.mktemp(f"original-{case}")
            shutil.copy(CASES[case][0], directory / "program.py")
            run_program(oracle_python(), directory / "program.py", directory, env=oracle_run_env()).check()
            done[case] = directory
        return done[case]

    return original_dir


@pytest.mark.parametrize("target", ["keras", "ctl"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_exported_savedmodels_match_tf1(case: str, target: str, original_dirs, tmp_path: Path) -> None:
    """The Keras target's exports (of the Keras model) and `--target ctl`'s (of the loop's model)."""
    program, exports = CASES[case]
    original_dir = original_dirs(case)
    migrated_dir = tmp_path / "migrated"
    migrated_dir.mkdir()
    migrated = transform_source(program.read_text(encoding="utf-8"), options=Options(target=target)).output
    (migrated_dir / "program.py").write_text(migrated, encoding="utf-8")
    run_program(sys.executable, migrated_dir / "program.py", migrated_dir).check()

    for sub in exports:
        tf1 = _load(oracle_python(), _only_export(original_dir / sub), tmp_path)
        tf2 = _load(sys.executable, _only_export(migrated_dir / sub), tmp_path)
        assert sorted(tf1) == sorted(tf2), f"{sub}: signatures {sorted(tf1)} vs {sorted(tf2)}"
        problems: list[str] = []
        for name in tf1:
            assert tf1[name]["method"] == tf2[name]["method"], f"{sub}/{name}: method names differ"
            assert tf1[name]["inputs"] == tf2[name]["inputs"], f"{sub}/{name}: inputs {tf1[name]['inputs']} vs {tf2[name]['inputs']}"
            assert sorted(tf1[name]["outputs"]) == sorted(tf2[name]["outputs"]), f"{sub}/{name}: output keys differ"
            for key in tf1[name]["outputs"]:
                _close(tf1[name]["outputs"][key], tf2[name]["outputs"][key], f"{sub}/{name}/{key}", problems)
        assert not problems, "\n".join(problems)
    if case == "receiver_alternatives":  # TF1 wrote `<alternative>:<output>` signatures, not all of them.
        assert {"raw:serving_default", "scaled:logits"} <= set(tf1) and "raw:classify" not in tf1
    if case != "exporters":
        return
    # The export directories are timestamped like TF1's.
    assert len(list((migrated_dir / "tae" / "export" / "latest").iterdir())) == len(
        list((original_dir / "tae" / "export" / "latest").iterdir())
    )
