"""The pre-commit hooks, for real: `pre-commit try-repo <this checkout>` in a throwaway git repository.

try-repo builds the hook's virtualenv by pip-installing this checkout (its uncommitted changes
included), so this test takes about a minute; it makes one try-repo call that runs both hooks.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from conftest import FIXTURES, ROOT

PROGRAM = FIXTURES / "TFM301_tpu_estimator_to_keras" / "guide_adagrad.in.py"
MIGRATED = FIXTURES / "TFM301_tpu_estimator_to_keras" / "guide_adagrad.out.py"


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def _hooks() -> dict[str, dict]:
    return {hook["id"]: hook for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}


def test_hook_manifest() -> None:
    hooks = _hooks()
    assert set(hooks) == {"tfmigrate", "tfmigrate-fix"}
    for hook in hooks.values():
        assert hook["language"] == "python"
        assert hook["types_or"] == ["python", "jupyter"]
        assert hook.get("require_serial", False) is False  # pre-commit fans out; tfmigrate runs -j 1
        assert "-j 1" in hook["entry"] and "--allow-no-paths" in hook["entry"]
    assert "--check" in hooks["tfmigrate"]["entry"] and "--check" not in hooks["tfmigrate-fix"]["entry"]


def test_hook_entry_with_no_files_succeeds(tmp_path: Path) -> None:
    """pre-commit calls a hook with no files when a user sets always_run; that must pass."""
    exe = Path(sys.executable).with_name("tfmigrate")
    for hook in _hooks().values():
        argv = [str(exe), *hook["entry"].split()[1:]]
        proc = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
    proc = subprocess.run([str(exe), "--check"], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 2 and "no PATH given" in proc.stderr  # only the hook's flag allows it


def test_pre_commit_try_repo_check_then_fix(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    _git("init", "-q", cwd=project)
    _git("config", "user.email", "dev@example.com", cwd=project)
    _git("config", "user.name", "dev", cwd=project)
    shutil.copy(PROGRAM, project / "train.py")
    (project / "plain.py").write_text("print('no tensorflow here')\n")
    _git("add", "train.py", "plain.py", cwd=project)
    env = dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"), PRE_COMMIT_COLOR="never")
    proc = subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), "--files", "train.py", "plain.py"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    check, _, fix = out.partition("tfmigrate (fix)")
    # The check hook failed, naming file, line and rule for each place that would change ...
    assert "tfmigrate (check)" in check and "Failed" in check, out
    assert "train.py:11: TFM101 would change line 11" in check, out
    assert "train.py:27: TFM301 would change lines 27-36" in check, out
    assert "train.py:48: TFM302 would change" in check, out
    assert "would migrate train.py" in check
    assert "plain.py" not in check  # a file without TensorFlow is fine
    # ... and the fix hook rewrote the file.
    assert "files were modified by this hook" in fix, out
    assert "migrated train.py" in fix, out
    assert (project / "train.py").read_text() == MIGRATED.read_text()
    assert (project / "plain.py").read_text() == "print('no tensorflow here')\n"


def test_pre_commit_calling_the_hook_with_no_files_passes(tmp_path: Path) -> None:
    """With `always_run: true` and nothing staged that matches, pre-commit runs the entry with no
    files. The manifest's own entry runs as a local hook installed from this checkout."""
    project = tmp_path / "project"
    project.mkdir()
    _git("init", "-q", cwd=project)
    (project / "README.md").write_text("no python here\n")
    hook = _hooks()["tfmigrate"]
    config = {
        "repos": [
            {
                "repo": "local",
                "hooks": [
                    {
                        "id": "tfmigrate-no-files",
                        "name": "tfmigrate with no files",
                        "entry": hook["entry"],
                        "language": "python",
                        "types_or": hook["types_or"],
                        "always_run": True,
                        "additional_dependencies": [str(ROOT)],
                    }
                ],
            }
        ]
    }
    (project / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config))
    _git("add", ".", cwd=project)
    env = dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"), PRE_COMMIT_COLOR="never")
    proc = subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--all-files", "--verbose"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "tfmigrate with no files" in out and "Passed" in out and "Skipped" not in out, out
