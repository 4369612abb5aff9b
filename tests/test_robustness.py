"""Issue #15: file safety and robustness — odd files, odd trees, odd runs never cost a user's work."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import FIXTURES
from tfmigrate import runner
from tfmigrate.cli import main
from tfmigrate.engine import reference_transform, transform_source

PROGRAM = FIXTURES / "TFM301_tpu_estimator_to_keras" / "guide_adagrad.in.py"
MIGRATED = FIXTURES / "TFM301_tpu_estimator_to_keras" / "guide_adagrad.out.py"
FLAGS_PROGRAM = (
    "import tensorflow as tf\n\nflags = tf.app.flags\nFLAGS = flags.FLAGS\n"
    'flags.DEFINE_string("a", "b", "c")\n\n\ndef main(_):\n    tf.logging.info(FLAGS.a)\n'
)


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


# 1. Line endings; internal errors stay with their file.


@pytest.mark.parametrize("newline", ["\r\n", "\r"])
def test_line_endings_do_not_change_the_migration(newline: str) -> None:
    lf = transform_source(FLAGS_PROGRAM)
    other = transform_source(FLAGS_PROGRAM.replace("\n", newline))
    assert "absl_flags" not in lf.output
    assert other.error is None
    assert other.output == lf.output.replace("\n", newline)
    assert [(c.code, c.line, c.end_line) for c in other.changes] == [(c.code, c.line, c.end_line) for c in lf.changes]
    assert reference_transform(FLAGS_PROGRAM.replace("\n", newline)).output == other.output


def test_form_feed_does_not_change_the_migration() -> None:
    lf = transform_source(FLAGS_PROGRAM)
    ff = transform_source(FLAGS_PROGRAM.replace("\n\n\n", "\n\x0c\n\n"))
    assert "absl_flags" not in ff.output
    assert ff.output.replace("\x0c", "") == lf.output


def test_cr_only_file_through_the_cli(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_bytes(b'import tensorflow as tf\r\rtf.logging.info("x")\r')
    code, _, err = invoke(str(path))
    assert code == 1, err
    assert path.read_bytes() == b'import tensorflow as tf\rfrom absl import logging\r\rlogging.info("x")\r'


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_an_internal_error_is_isolated_to_its_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: str) -> None:
    real = runner.transform_source

    def flaky(source: str, **kwargs):
        if kwargs.get("filename", "").endswith("boom.py"):
            raise IndexError("list index out of range")
        return real(source, **kwargs)

    monkeypatch.setattr(runner, "transform_source", flaky)
    boom = tmp_path / "boom.py"
    boom.write_text("import tensorflow as tf\ntf.logging.info('x')\n")
    before = boom.read_bytes()
    for name in ("a.py", "z.py"):
        shutil.copy(PROGRAM, tmp_path / name)
    code, _, err = invoke("-j", jobs, str(tmp_path))
    assert code == 2
    assert boom.read_bytes() == before
    assert f"{boom}: error E999: internal error: IndexError: list index out of range" in err
    assert (tmp_path / "a.py").read_text() == (tmp_path / "z.py").read_text() == MIGRATED.read_text()
    assert "3 files: 2 changed" in err and "1 failed" in err
