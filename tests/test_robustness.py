"""Issue #15: file safety and robustness — odd files, odd trees, odd runs never cost a user's work."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import stat
import textwrap
import time
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
    code, out, err = invoke("-j", jobs, str(tmp_path))
    assert code == 2
    assert boom.read_bytes() == before
    assert f"{boom}: error E999: internal error: IndexError: list index out of range" in err  # errors: stderr
    assert (tmp_path / "a.py").read_text() == (tmp_path / "z.py").read_text() == MIGRATED.read_text()
    assert "3 files: 2 migrated fully" in out and "1 failed" in out  # the summary: stdout


def _tree(tmp_path: Path, *names: str) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    for name in names:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(PROGRAM, root / name)
    return root


# 2. Exit codes: 1 = files changed, 2 = a failure, 130 = Ctrl-C (with what was written).


def _interrupted_on_b(root: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    real = runner.transform_source

    def interrupt_on_b(source: str, **kwargs):
        if kwargs.get("filename", "").endswith("b.py"):
            raise KeyboardInterrupt
        return real(source, **kwargs)

    monkeypatch.setattr(runner, "transform_source", interrupt_on_b)
    code, _, err = invoke(str(root))
    return code, err


def test_ctrl_c_exits_130_and_lists_the_files_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _tree(tmp_path, "b.py", "c.py")
    (root / "a.py").write_text(FLAGS_PROGRAM)
    code, err = _interrupted_on_b(root, monkeypatch)
    assert code == 130
    assert "interrupted; 1 file(s) already written" in err and str(root / "a.py") in err
    assert (root / "a.py").read_text() == transform_source(FLAGS_PROGRAM).output != FLAGS_PROGRAM
    assert (root / "b.py").read_text() == (root / "c.py").read_text() == PROGRAM.read_text()


def test_ctrl_c_writes_no_module_held_until_the_run_knows_what_others_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A module whose model_fn the Keras rewrite replaces is held until the run knows whether
    another module imports that model_fn (which then keeps it as written): interrupted before,
    it is not written. Uninterrupted, it is."""
    root = _tree(tmp_path, "a.py", "b.py", "c.py")
    code, err = _interrupted_on_b(root, monkeypatch)
    assert code == 130 and "interrupted; 0 file(s) already written" in err
    assert all((root / name).read_text() == PROGRAM.read_text() for name in ("a.py", "b.py", "c.py"))
    monkeypatch.undo()
    assert invoke(str(root))[0] == 1
    assert (root / "a.py").read_text() == MIGRATED.read_text()


def test_changed_files_still_exit_1(tmp_path: Path) -> None:
    root = _tree(tmp_path, "a.py")
    assert invoke(str(root))[0] == 1
    assert invoke(str(root))[0] == 0


# 3. An unreadable directory is an E002 for that path; the rest is migrated.

NOBODY = 65534


def _cli(*args: str, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """The console script in a child process that mode bits bind. Under root (for whom a mode-000
    directory is readable) the child stays root but loses the two capabilities that bypass them
    (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH): it still reads the checkout, its .venv and the
    interpreter wherever they live (a private mode-700 directory, a path with a space), since
    root owns them, and a directory of mode 000 is closed to it as to any user. Running as
    `nobody` instead needed a world-readable checkout."""
    command = [sys.executable, "-c", "from tfmigrate.cli import main; main()", *args]
    if os.geteuid() == 0:
        command = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--inh-caps=-all", *command]
    return subprocess.run(command, capture_output=True, text=True, cwd=cwd, timeout=timeout)


@pytest.mark.parametrize("extra", [[], ["-j", "2"], ["--check"]])
def test_unreadable_directory_is_e002_and_the_rest_is_migrated(tmp_path: Path, extra: list[str]) -> None:
    root = tmp_path / "proj"
    (root / "locked").mkdir(parents=True)
    shutil.copy(PROGRAM, root / "a.py")
    shutil.copy(PROGRAM, root / "locked" / "b.py")
    shutil.copy(PROGRAM, root / "z.py")
    (root / "locked").chmod(0)
    try:
        result = _cli(*extra, str(root))
    finally:
        (root / "locked").chmod(0o755)
    assert result.returncode == 2, result.stderr
    assert f"{root / 'locked'}: error E002: cannot read directory: Permission denied" in result.stderr
    expected = PROGRAM if extra == ["--check"] else MIGRATED
    assert (root / "a.py").read_text() == (root / "z.py").read_text() == expected.read_text()
    assert "3 files" in result.stdout and "1 failed" in result.stdout


# 4. Symlinks stay links (the target is migrated once); hard links keep their inode.


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_symlink_stays_a_link_and_its_target_is_migrated_once(tmp_path: Path, jobs: str) -> None:
    root = _tree(tmp_path, "target.py", "other.py")
    (root / "link.py").symlink_to("target.py")
    outside = tmp_path / "outside.py"
    shutil.copy(PROGRAM, outside)
    (root / "ext.py").symlink_to(outside)
    code, out, err = invoke("-j", jobs, str(root))
    assert code == 1, err
    assert (root / "link.py").is_symlink() and os.readlink(root / "link.py") == "target.py"
    assert (root / "ext.py").is_symlink()
    assert (root / "target.py").read_text() == outside.read_text() == MIGRATED.read_text()
    assert "3 files: 3 migrated fully" in out  # target.py once (not also as link.py), other.py, ext.py's target


def test_hard_link_keeps_its_inode(tmp_path: Path) -> None:
    root = _tree(tmp_path, "a.py")
    os.link(root / "a.py", tmp_path / "twin.py")
    inode = (root / "a.py").stat().st_ino
    code, _, _ = invoke(str(root))
    assert code == 1
    assert (root / "a.py").stat().st_ino == inode
    assert (tmp_path / "twin.py").read_text() == MIGRATED.read_text()


# 5. A file edited while the run worked on it is left as the user wrote it (E007).


def test_file_changed_during_migration_is_left_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _tree(tmp_path, "a.py", "b.py")
    real = runner.transform_source

    def edit_meanwhile(source: str, **kwargs):
        result = real(source, **kwargs)
        if kwargs.get("filename", "").endswith("a.py"):
            with open(root / "a.py", "a") as handle:
                handle.write("# the user's edit\n")
        return result

    monkeypatch.setattr(runner, "transform_source", edit_meanwhile)
    code, _, err = invoke(str(root))
    assert code == 2
    assert (root / "a.py").read_text() == PROGRAM.read_text() + "# the user's edit\n"
    assert f"{root / 'a.py'}: error E007: changed during migration" in err
    assert (root / "b.py").read_text() == MIGRATED.read_text()


# 6. Owner, group and mode are kept.


def test_owner_group_and_mode_are_kept(tmp_path: Path) -> None:
    root = _tree(tmp_path, "a.py")
    path = root / "a.py"
    uid, gid = (NOBODY, NOBODY) if os.geteuid() == 0 else (os.getuid(), os.getgid())
    os.chown(path, uid, gid)
    path.chmod(0o640)
    code, _, _ = invoke(str(root))
    assert code == 1
    info = path.stat()
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (uid, gid, 0o640)
    assert path.read_text() == MIGRATED.read_text()


# 10. Nothing hangs: non-regular files are skipped; pool workers die with their parent.


@pytest.mark.parametrize("extra", [[], ["-j", "2"], ["--check"]])
def test_fifo_is_skipped_with_a_note(tmp_path: Path, extra: list[str]) -> None:
    root = _tree(tmp_path, "a.py")
    os.mkfifo(root / "pipe.py")
    result = subprocess.run(
        [sys.executable, "-c", "from tfmigrate.cli import main; main()", *extra, str(root)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 1, result.stderr
    assert f"{root / 'pipe.py'}: note: skipped: not a regular file" in result.stderr
    assert "1 file:" in result.stdout


def test_fifo_named_on_the_command_line_is_skipped(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.py")
    code, _, err = invoke(str(tmp_path / "pipe.py"))
    assert code == 0 and "not a regular file" in err


def test_a_file_swapped_for_a_fifo_after_discovery_does_not_block(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.py")
    outcome = runner.run_job(runner.Job(str(tmp_path / "pipe.py"), None, runner.CHECK, runner.Options()))
    assert outcome.status == "error" and outcome.errors[0].code == "E002"


def test_pool_workers_die_with_their_parent(tmp_path: Path) -> None:
    root = _tree(tmp_path, *(f"m{i}.py" for i in range(4)))
    (root / "slow.py").write_text("import tensorflow as tf\n" + "x = tf.a\n" * 40000)
    parent = subprocess.Popen(
        [sys.executable, "-c", "from tfmigrate.cli import main; main()", "-j", "2", "--check", str(root)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    deadline = time.time() + 30
    workers: list[int] = []
    while time.time() < deadline and len(workers) < 2:
        workers = _children(parent.pid)
        time.sleep(0.05)
    assert workers, "no pool workers seen"
    parent.kill()
    parent.wait()
    deadline = time.time() + 10
    while time.time() < deadline and any(_alive(pid) for pid in workers):
        time.sleep(0.1)
    assert not [pid for pid in workers if _alive(pid)]


def _children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(entry.name))
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


# 11. --out-dir collisions are refused before anything is written.


def test_out_dir_collision_is_refused(tmp_path: Path) -> None:
    src, src2, out = tmp_path / "src", tmp_path / "src2", tmp_path / "out"
    for root in (src, src2):
        root.mkdir()
        shutil.copy(PROGRAM, root / "a.py")
    code, _, err = invoke(str(src), str(src2), "--out-dir", str(out))
    assert code == 2
    assert "would both be written to" in err
    assert not out.exists() or not any(out.iterdir())


# 12. Report destinations are checked before anything is touched.


@pytest.mark.parametrize("option", ["--report", "--sarif"])
def test_bad_report_path_fails_before_any_write(tmp_path: Path, option: str) -> None:
    root = _tree(tmp_path, "a.py")
    code, _, err = invoke(str(root), option, str(tmp_path / "nonexistent" / "dir" / "r.json"))
    assert code == 2 and "does not exist" in err
    assert (root / "a.py").read_text() == PROGRAM.read_text()


def test_report_and_sarif_cannot_share_stdout(tmp_path: Path) -> None:
    root = _tree(tmp_path, "a.py")
    code, _, err = invoke(str(root), "--report", "-", "--sarif", "-")
    assert code == 2 and "cannot both write to stdout" in err
    assert (root / "a.py").read_text() == PROGRAM.read_text()


# 9. Deep nesting and slow files are reported quickly, per file.


@pytest.mark.parametrize(
    "body, code",
    [
        (" + ".join(["tf.a"] * 5000), "E008"),  # Python's parser overflows
        (" + ".join(["tf.a"] * 1500), "E008"),  # parses, but LibCST would overflow (after seconds)
        ("f(" * 500 + "1" + ")" * 500, "E001"),  # a real syntax error: too many nested parentheses
    ],
)
def test_deep_nesting_is_reported_quickly(body: str, code: str) -> None:
    source = "import tensorflow as tf\nx = " + body + "\nest = tf.estimator.Estimator(model_fn=None)\n"
    start = time.monotonic()
    result = transform_source(source)
    assert time.monotonic() - start < 20  # it took 37 s before; generous for a loaded CI machine
    assert result.error is not None and result.error.code == code and result.output == source
    if code == "E008":
        assert "too deeply nested to migrate" in result.error.message
    else:
        assert "too many nested parentheses" in result.error.message


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_time_limit_reports_a_file_as_too_complex(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: str) -> None:
    root = _tree(tmp_path, "a.py", "slow.py")
    real = runner.transform_source

    def slow(source: str, **kwargs):
        if kwargs.get("filename", "").endswith("slow.py"):
            time.sleep(120)
        return real(source, **kwargs)

    monkeypatch.setattr(runner, "transform_source", slow)
    start = time.monotonic()
    # A 4 s budget: a.py takes 0.05-0.15 s alone, but a loaded CI worker's first file (cold caches)
    # took over 0.5 s once; slow.py would take 120 s.
    code, _, err = invoke("-j", jobs, "--timeout", "4", str(root))
    assert time.monotonic() - start < 40
    assert code == 2
    assert f"{root / 'slow.py'}: error E009: too complex to migrate within 4 s" in err
    assert (root / "slow.py").read_text() == PROGRAM.read_text() and (root / "a.py").read_text() == MIGRATED.read_text()


def test_timeout_is_configurable(tmp_path: Path) -> None:
    from tfmigrate.config import ConfigError, load_config

    (tmp_path / "pyproject.toml").write_text("[tool.tfmigrate]\ntimeout = 5\n")
    assert load_config(tmp_path / "pyproject.toml").timeout == 5
    (tmp_path / "pyproject.toml").write_text("[tool.tfmigrate]\ntimeout = 'x'\n")
    with pytest.raises(ConfigError, match="'timeout' must be a number"):
        load_config(tmp_path / "pyproject.toml")


# 13. Messages: syntax errors are E001, E003 says where and hints at UTF-16, odd names are quoted.


def test_null_byte_is_a_syntax_error_on_its_line(tmp_path: Path) -> None:
    result = transform_source("import tensorflow as tf\nx = 1\x00\n")
    assert result.error is not None and (result.error.code, result.error.line) == ("E001", 2)
    assert "null byte" in result.error.message


def test_decode_error_gives_the_byte_and_hints_at_utf16(tmp_path: Path) -> None:
    latin1 = tmp_path / "latin1.py"
    latin1.write_bytes(b"import tensorflow as tf\n# caf\xe9\n")
    utf16 = tmp_path / "utf16.py"
    utf16.write_bytes("import tensorflow as tf\n".encode("utf-16"))
    code, _, err = invoke(str(tmp_path))
    assert code == 2
    assert f"{latin1}: error E003: cannot decode: invalid utf-8 at byte 29 (line 2)" in err
    assert f"{utf16}: error E003: cannot decode" in err and "UTF-16" in err.split(str(utf16))[1]


def test_a_file_name_with_a_newline_is_quoted(tmp_path: Path) -> None:
    path = tmp_path / "bad\nname.py"
    path.write_text("import tensorflow.compat.v1 as tf\nx = tf.layers.dense(\n")
    code, _, err = invoke("--check", str(tmp_path))
    assert code == 2
    assert f"{str(path)!r}:3: error E001" in err or f"{str(path)!r}:2: error E001" in err


# 14. Exclusions apply below a named path, never to its ancestors.


@pytest.mark.parametrize("extra", [[], ["--check"], ["-j", "2"]])
def test_a_project_inside_a_hidden_directory_is_migrated(tmp_path: Path, extra: list[str]) -> None:
    root = tmp_path / ".cache" / "build" / "proj"
    root.mkdir(parents=True)
    shutil.copy(PROGRAM, root / "a.py")
    shutil.copy(PROGRAM, root / "b.py")
    (root / ".hidden").mkdir()
    shutil.copy(PROGRAM, root / ".hidden" / "skipped.py")
    code, out, err = invoke(*extra, str(root))
    assert code == 1, err
    assert "2 files" in out
    assert (root / ".hidden" / "skipped.py").read_text() == PROGRAM.read_text()


def test_a_named_directory_with_everything_excluded_says_so(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    (root / "build").mkdir(parents=True)
    shutil.copy(PROGRAM, root / "build" / "a.py")
    code, _, err = invoke(str(root))
    assert code == 0
    assert f"{root}: note: nothing to migrate: 1 path(s) below it excluded" in err


# -- 13. a declined model_fn's note points at the statement that blocked it ---------------------------


def test_a_declined_model_fn_names_the_blocking_statement_and_its_line(tmp_path: Path) -> None:
    """The note of a model_fn the Keras rewrite declines names the statement (and its line), not
    only the `def` many lines above it."""
    body = "".join(f"  net = tf.layers.dense(net, {8 + i}, activation=tf.nn.relu)\n" for i in range(20))
    source = (
        "import tensorflow as tf\n\n\n"
        "def model_fn(features, labels, mode, params):\n"
        "  net = features['x']\n"
        f"{body}"
        "  while net.shape.rank > 2:\n"
        "    net = tf.reduce_mean(net, axis=1)\n"
        "  logits = tf.layers.dense(net, 2)\n"
        "  loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)\n"
        "  train_op = tf.train.AdamOptimizer().minimize(loss, tf.train.get_global_step())\n"
        "  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)\n\n\n"
        "def main():\n"
        "  estimator = tf.estimator.Estimator(model_fn, params={'extra_layer': True})\n"
        "  estimator.train(lambda: None, steps=1)\n"
    )
    path = tmp_path / "trainer.py"
    path.write_text(source, encoding="utf-8")
    blocking = source.splitlines().index("  while net.shape.rank > 2:") + 1
    assert blocking == 26
    result = CliRunner().invoke(main, [str(path)])
    assert result.exit_code in (0, 1), result.output
    migrated = path.read_text(encoding="utf-8")
    assert f"(line {blocking}: `while net.shape.rank > 2:`)" in migrated, migrated


def test_a_statement_line_is_counted_as_libcst_positions_put_it() -> None:
    """The line a decline names is counted by generating its top-level statement's text only as
    far as the statement (`estimator_scan._line_within`): the same line as LibCST's positions,
    for every statement and expression inside decorated defs, classes, compound statements, lines of several small
    statements, continued lines and strings spanning lines."""
    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider

    from tfmigrate.estimator_scan import _line_within

    source = textwrap.dedent('''\
        import tensorflow as tf


        @decorator(
            1)
        # a comment
        @other
        def model_fn(features, labels, mode, params):
          """Doc
          string."""
          net = features['x']; other = 1
          if params.get('deep'):

            # comment above
            net = tf.layers.dense(net,
                                  8)
          elif mode == 'x':
            pass
          else:
            with tf.variable_scope('s') as s, \\
                other:
              net = f"""{net}
              """
          try:
            x = [i for i in (
              net)]
          except ValueError as e:
            raise
          finally:
            y = 2
          class Inner(Base):
            @property
            def f(self): return (
              1)
          return tf.estimator.EstimatorSpec(mode, loss=net)
        ''')
    module = cst.parse_module(source)
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    checked = 0

    class Every(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            nonlocal checked
            if isinstance(node, (cst.BaseStatement, cst.BaseSmallStatement, cst.BaseExpression)):
                want = positions[node].start.line - positions[top].start.line
                assert _line_within(module, top, node) == want, module.code_for_node(node)
                checked += 1
            return True

    for top in module.body:
        top.visit(Every())
    assert checked > 90


def _late_init_checkpoint_program() -> str:
    """A model_fn whose `if init_checkpoint:` (which the Keras rewrite declines) is 23 lines below its `def`."""
    body = "".join(f"  net = tf.layers.dense(net, {8 + i}, activation=tf.nn.relu)\n" for i in range(20))
    return (
        "import tensorflow as tf\n\n\n"
        "def model_fn(features, labels, mode, params):\n"
        "  init_checkpoint = params['init_checkpoint']\n"
        "  net = features['x']\n"
        f"{body}"
        "  if init_checkpoint:\n"
        "    tf.logging.info('warm start from %s', init_checkpoint)\n"
        "    net = tf.stop_gradient(net)\n"
        "  logits = tf.layers.dense(net, 2)\n"
        "  loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)\n"
        "  train_op = tf.train.AdamOptimizer().minimize(loss, tf.train.get_global_step())\n"
        "  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)\n\n\n"
        "def main():\n"
        "  estimator = tf.estimator.Estimator(model_fn=model_fn, model_dir='out')\n"
        "  estimator.train(lambda: None, steps=1)\n"
    )


REASON = "`model_fn` cannot be migrated automatically yet: an `if` in model_fn that is not a TRAIN-mode or use_tpu switch"
DECLINED = f"TFM201 TODO: {REASON}: rewrite that construct"


def test_a_declined_model_fn_todo_is_reported_at_the_blocking_statement(tmp_path: Path) -> None:
    """Without the hosted tier (TFM101 not run) the declined model_fn gets a TODO: the text output,
    the JSON report and the SARIF log give the line of the `if` that declined, not the `def`'s."""
    source = _late_init_checkpoint_program()
    path = tmp_path / "trainer.py"
    path.write_text(source, encoding="utf-8")
    lines = source.splitlines()
    blocking = lines.index("  if init_checkpoint:") + 1
    assert blocking - (lines.index("def model_fn(features, labels, mode, params):") + 1) > 20
    report, sarif = tmp_path / "report.json", tmp_path / "report.sarif"
    code, out, _ = invoke("--check", "--select", "TFM201", "--report", str(report), "--sarif", str(sarif), str(path))
    assert code == 1, out
    assert f"{path}:{blocking}: {DECLINED}" in out, out
    todos = json.loads(report.read_text(encoding="utf-8"))["files"][0]["todos"]
    assert [t["line"] for t in todos if "rewrite that construct" in t["message"]] == [blocking], todos
    results = json.loads(sarif.read_text(encoding="utf-8"))["runs"][0]["results"]
    declined = [r for r in results if "rewrite that construct" in r["message"]["text"]]
    assert [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in declined] == [blocking], results
    # The site's own TODO stays at the site, naming the statement (no line number: see the next test).
    site = lines.index("  estimator = tf.estimator.Estimator(model_fn=model_fn, model_dir='out')") + 1
    assert f"{path}:{site}: TFM201 TODO: {REASON} (`if init_checkpoint:`)" in out, out


def test_a_declined_model_fn_todo_is_written_above_the_blocking_statement_once(tmp_path: Path) -> None:
    """Written, the TODO sits right above the `if` and is reported on its own line; running again (or
    the engine's second pass) finds the same TODOs and adds none (a line number in them did)."""
    path = tmp_path / "trainer.py"
    path.write_text(_late_init_checkpoint_program(), encoding="utf-8")
    code, out, _ = invoke("--select", "TFM201", str(path))
    assert code == 1, out
    written = path.read_text(encoding="utf-8")
    lines = written.splitlines()
    at = lines.index("  if init_checkpoint:")  # the 0-based index of the `if` is the 1-based line of the TODO above it
    assert lines[at - 1].startswith(f"  # TODO(tfmigrate TFM201): {REASON}: rewrite that construct"), written
    assert f"{path}:{at}: {DECLINED}" in out, out
    assert written.count("# TODO(tfmigrate TFM201)") == 2, written
    code, again, _ = invoke("--select", "TFM201", str(path))
    assert path.read_text(encoding="utf-8") == written
    assert f"{path}:{at}: {DECLINED}" in again, again


_RESPELLED = "def flat(x):\n  return tf.contrib.layers.flatten(x)\n"  # -> tfm.legacy.slim.flatten


@pytest.mark.parametrize(("binding", "line"), [
    ("tfm = 1\n", 2),
    ("import numpy as tfm\n", 2),
    ("from models import tfm\n", 2),
    ("def f(tfm):\n  return tfm\n", 2),
    ("def f():\n  for tfm in range(2):\n    pass\n", 3),
    ("def f():\n  try:\n    pass\n  except ValueError as tfm:\n    pass\n", 5),
    ("g = lambda tfm: tfm\n", 2),
])
def test_a_program_binding_tfm_is_left_untouched_with_e010(binding: str, line: int) -> None:
    """Migrated code reads the runtime as `tfm`: where the program binds that name to something
    else, in any scope, a migration would call the program's `tfm` (before: `tfm.legacy.slim.flatten`
    on the program's int or parameter). The file is refused, on both pipelines."""
    source = "import tensorflow as tf\n" + binding + _RESPELLED
    for migrate in (transform_source, reference_transform):
        result = migrate(source)
        assert result.output == source and not result.changed
        assert result.error is not None and (result.error.code, result.error.line) == ("E010", line), result.error


@pytest.mark.parametrize("other", [
    "import tfmigrate.runtime as tfm\n",  # a migrated file, run again
    "from tfmigrate import runtime as tfm\n",
    "# tfm is what the migration calls the runtime\nx = 'tfm'\n",
    "x = obj.tfm\n",
])
def test_tfm_as_the_runtime_or_only_as_a_word_migrates(other: str) -> None:
    result = transform_source("import tensorflow as tf\n" + other + _RESPELLED)
    assert result.error is None and "tfm.legacy.slim.flatten(x)" in result.output


def test_e010_through_the_cli_leaves_the_file_and_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "model.py"
    source = "import tensorflow as tf\n\n\ndef f(tfm):\n  return tf.contrib.layers.flatten(tfm)\n"
    path.write_text(source)
    result = CliRunner().invoke(main, [str(path)], catch_exceptions=False)
    assert result.exit_code == 2
    assert f"{path}:4: error E010: the file binds `tfm` here" in result.stderr
    assert path.read_text() == source
