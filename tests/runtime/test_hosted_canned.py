"""`tfm.estimator`'s canned estimators: a program that returns its estimator from a helper and
hands it to `train_and_evaluate` (Google's census sample's shape) runs on the hosted tier, as the
`tfm.canned` Keras model, with TF 2.15's numbers.

The program (`canned_programs/`) is spelled for TF 2.15; the migrated copy is what the hosted
tier leaves (`tf.estimator.X` -> `tfm.estimator.X`, by text replacement here). The canned
class is the v2 one (`tf.estimator.X` on the oracle: `api="v2"` on the hosted side) or, spelled
`tf.compat.v1.estimator.X`, the v1 one (`tfm.estimator.X`'s default `api="v1"`). The runtime does
not reproduce TF1's seeded initial values of canned models, so the migrated program continues
from the oracle's model_dir (`harness.run_continued`): its second run must give what a second
TF 2.15 run gives, every value within 1e-5.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from equivalence.harness import compare, run_continued

PROGRAMS = Path(__file__).parent / "canned_programs"
CANNED = "DNNLinearCombinedClassifier("


def _pair(case: str, api: str, tmp_path: Path) -> tuple[Path, Path]:
    source = (PROGRAMS / f"{case}.py").read_text(encoding="utf-8")
    if api == "v1":
        source = source.replace(f"tf.estimator.{CANNED}", f"tf.compat.v1.estimator.{CANNED}")
    migrated = source.replace("tf.compat.v1.estimator.", "tfm.estimator.").replace("tf.estimator.", "tfm.estimator.")
    if api == "v2":
        migrated = migrated.replace(f"tfm.estimator.{CANNED}", f"tfm.estimator.{CANNED}api='v2', ")
    migrated = migrated.replace("import tensorflow as tf\n", "import tensorflow as tf\nimport tfmigrate.runtime as tfm\n", 1)
    original_path, migrated_path = tmp_path / "original.py", tmp_path / "migrated.py"
    original_path.write_text(source, encoding="utf-8")
    migrated_path.write_text(migrated, encoding="utf-8")
    return original_path, migrated_path


@pytest.mark.tf
@pytest.mark.oracle
@pytest.mark.parametrize("api", ["v2", "v1"])
def test_census_build_estimator_train_and_evaluate(api: str, tmp_path: Path) -> None:
    original, migrated = _pair("census_build_estimator", api, tmp_path)
    assert "tf.estimator" not in migrated.read_text() and "compat.v1.estimator" not in migrated.read_text()
    expected, actual = run_continued(original, migrated, tmp_path / "runs")
    assert len(expected) == 2 * 5  # train_and_evaluate, evaluate, 3 predictions; two runs
    assert expected[0]["global_step"] == 30 and expected[5]["global_step"] == 60
    assert compare(expected, actual) == []
