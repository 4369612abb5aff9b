"""[tool.tfmigrate] in pyproject.toml: discovery, keys, CLI precedence, excludes and per-file-ignores."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

import tfmigrate.cli as cli
from conftest import FIXTURES
from tfmigrate.config import ConfigError, PathFilter, find_config, load_config, match_glob

PROGRAM = FIXTURES / "TFM301_tpu_estimator_to_keras" / "guide_adagrad.in.py"
COMPAT = FIXTURES / "TFM101_compat_v1_to_v2" / "tf1_alias.in.py"


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli.main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def write_config(directory: Path, body: str) -> Path:
    path = directory / "pyproject.toml"
    path.write_text("[project]\nname = 'x'\n\n[tool.tfmigrate]\n" + body)
    return path


def test_found_walking_up_from_the_first_path(tmp_path: Path) -> None:
    config = write_config(tmp_path, "jobs = 2\n")
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "pyproject.toml").write_text("[project]\nname = 'no table here'\n")  # skipped
    assert find_config(tmp_path / "a" / "b") == config
    assert find_config(tmp_path / "a" / "b" / "missing.py") == config
    assert find_config(tmp_path.parent) is None or find_config(tmp_path.parent) != config


def test_keys_are_read_and_checked(tmp_path: Path) -> None:
    config = write_config(
        tmp_path,
        'target = "keras"\nselect = ["TFM1", "TFM302"]\nignore = ["TFM101"]\njobs = 0\nsafe-only = true\n'
        'standalone = true\nexclude = ["gen"]\nextend-exclude = ["third_party"]\n'
        '[tool.tfmigrate.per-file-ignores]\n"tests/**" = ["TFM3"]\n',
    )
    loaded = load_config(config)
    assert loaded.select == ("TFM1", "TFM302") and loaded.ignore == ("TFM101",)
    assert loaded.jobs == 0 and loaded.safe_only is True and loaded.standalone is True
    assert loaded.exclude == ("gen",) and loaded.extend_exclude == ("third_party",)
    assert loaded.per_file_ignores == (("tests/**", frozenset({"TFM301", "TFM302"})),)
    assert loaded.root == tmp_path.resolve()


@pytest.mark.parametrize(
    "body, message",
    [
        ("colour = 'red'\n", "unknown key 'colour'"),
        ("safe_only = true\n", "unknown key 'safe_only' (did you mean 'safe-only'?)"),
        ("jobs = -1\n", "'jobs' must be an integer >= 0"),
        ("target = 'torch'\n", "'target' must be one of keras, ctl"),
        ("select = ['TFM9']\n", "'select': unknown rule selector 'TFM9'"),
        ("safe-only = 'yes'\n", "'safe-only' must be true or false"),
        ("exclude = [1]\n", "'exclude' must be a list of strings"),
        ("per-file-ignores = { 'x.py' = ['NOPE'] }\n", "per-file-ignores 'x.py': unknown rule selector"),
        ("jobs = [\n", "invalid TOML"),
    ],
)
def test_bad_config_is_a_clear_usage_error(tmp_path: Path, body: str, message: str) -> None:
    write_config(tmp_path, body)
    src = tmp_path / "p.py"
    shutil.copy(COMPAT, src)
    code, _, err = invoke("--check", str(src))
    assert code == 2
    assert message in err and "pyproject.toml" in err
    assert src.read_bytes() == COMPAT.read_bytes()


def test_explicit_config_file(tmp_path: Path) -> None:
    elsewhere = tmp_path / "conf"
    elsewhere.mkdir()
    config = write_config(elsewhere, 'ignore = ["TFM101"]\n')
    src = tmp_path / "p.py"
    shutil.copy(COMPAT, src)
    code, _, _ = invoke("--check", str(src))
    assert code == 1  # no config found: TFM101 applies
    code, _, err = invoke("--check", "--config", str(config), str(src))
    assert code == 0, err
    (tmp_path / "plain.toml").write_text("[tool.other]\n")
    code, _, err = invoke("--check", "--config", str(tmp_path / "plain.toml"), str(src))
    assert code == 2 and "no [tool.tfmigrate] table" in err


def test_cli_flags_override_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_config(tmp_path, 'select = ["TFM302"]\njobs = 3\nsafe-only = true\nstandalone = true\n')
    src = tmp_path / "p.py"
    shutil.copy(PROGRAM, src)
    seen = {}

    def fake_run(paths, **kwargs):
        seen.update(kwargs)
        return []

    monkeypatch.setattr(cli, "run", fake_run)
    invoke("--check", str(src))
    assert seen["jobs"] == 3
    assert seen["options"].select == frozenset({"TFM302"})
    assert seen["options"].safe_only is True and seen["options"].standalone is True
    invoke("--check", "-j", "1", "--select", "TFM1", "--no-safe-only", str(src))
    assert seen["jobs"] == 1 and seen["options"].select == frozenset({"TFM101", "TFM102", "TFM103", "TFM104", "TFM105"}) and seen["options"].safe_only is False
    assert seen["options"].standalone is True  # config-only key, carried through


def test_select_and_ignore_from_config_really_apply(tmp_path: Path) -> None:
    write_config(tmp_path, 'ignore = ["TFM3", "TFM2"]\n')
    src = tmp_path / "p.py"
    shutil.copy(PROGRAM, src)
    code, out, _ = invoke("--diff", str(src))
    # No Keras model (TFM2/TFM3 ignored): TFM101 alone leaves the estimator as written, on the
    # hosted tier's `tfm.estimator`.
    assert code == 1 and "class KerasModel" not in out and "tfm.fit" not in out
    assert "+import tensorflow as tf" in out and "tfm.estimator." in out


def test_exclude_and_per_file_ignores(tmp_path: Path) -> None:
    write_config(
        tmp_path,
        'extend-exclude = ["generated", "legacy/old_*.py"]\n'
        '[tool.tfmigrate.per-file-ignores]\n"experiments/**" = ["TFM3"]\n"keep_v1.py" = ["TFM101"]\n',
    )
    for rel in ("generated/a.py", "legacy/old_b.py", "legacy/new_b.py", "experiments/c.py", "keep_v1.py", "build/d.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(PROGRAM if "experiments" in rel else COMPAT, tmp_path / rel)
    report = tmp_path / "report.json"
    code, _, _ = invoke("--check", "--report", str(report), str(tmp_path))
    files = {Path(f["path"]).relative_to(tmp_path).as_posix(): f for f in json.loads(report.read_text())["files"]}
    assert sorted(files) == ["experiments/c.py", "keep_v1.py", "legacy/new_b.py"]  # defaults (build) still excluded
    assert files["keep_v1.py"]["status"] == "unchanged"
    assert "TFM301" not in files["experiments/c.py"]["rules"] and "TFM101" in files["experiments/c.py"]["rules"]
    assert files["legacy/new_b.py"]["rules"] == ["TFM101"]
    # A file named on the command line is taken, unless --force-exclude (what the hook passes).
    code, _, err = invoke("--check", str(tmp_path / "generated" / "a.py"))
    assert code == 1
    code, out, _ = invoke("--check", "--force-exclude", str(tmp_path / "generated" / "a.py"))
    assert code == 0 and "0 files" in out
    # --exclude replaces `exclude` (here: the defaults); `extend-exclude` still adds to it, as in ruff.
    code, _, err = invoke("--check", "--report", str(report), "--exclude", "experiments", str(tmp_path))
    names = {Path(f["path"]).relative_to(tmp_path).as_posix() for f in json.loads(report.read_text())["files"]}
    assert "build/d.py" in names and "experiments/c.py" not in names and "generated/a.py" not in names


@pytest.mark.parametrize(
    "pattern, path, expected",
    [
        ("build", "build/x.py", True),
        ("build", "src/build/x.py", True),
        ("build", "builder/x.py", False),
        ("*_pb2.py", "a/b/c_pb2.py", True),
        (".*", "src/.hidden/x.py", True),
        ("legacy/**", "legacy/a/b.py", True),
        ("legacy/**", "src/legacy/a.py", False),
        ("tools/gen_*.py", "tools/gen_x.py", True),
        ("tools/gen_*.py", "tools/sub/gen_x.py", False),
        ("**/tests/*.py", "a/b/tests/t.py", True),
        ("**/tests/*.py", "tests/t.py", True),
        ("experiments/old", "experiments/old/x.py", True),
        ("nb/[!x]*.ipynb", "nb/a.ipynb", True),
    ],
)
def test_glob_semantics(pattern: str, path: str, expected: bool) -> None:
    assert match_glob(pattern, path) is expected


def test_path_filter_is_relative_to_the_config_root(tmp_path: Path) -> None:
    filt = PathFilter(root=tmp_path.resolve(), exclude=("sub/x.py",), per_file_ignores=(("sub/*", frozenset({"TFM101"})),))
    assert filt.excluded(tmp_path / "sub" / "x.py")
    assert not filt.excluded(tmp_path / "other" / "sub" / "x.py")
    assert filt.ignored_codes(tmp_path / "sub" / "y.py") == {"TFM101"}


def test_load_without_file_is_empty() -> None:
    assert load_config(None).path is None
    with pytest.raises(ConfigError):
        load_config(Path("/nonexistent/pyproject.toml"))


def _relative_by_pathlib(root: Path, path: str) -> str:
    """What PathFilter.relative computes, spelled with pathlib: the absolute path, then the resolved
    one, against the root, then against the current directory."""
    fulls = (Path(os.path.abspath(path)), Path(path).resolve())
    for base in (root, Path.cwd().resolve()):
        for full in fulls:
            try:
                return full.relative_to(base).as_posix()
            except ValueError:
                continue
    return fulls[0].as_posix().lstrip("/")


def test_relative_paths_through_symlinks_and_dotdot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = tmp_path / "real" / "pkg"
    real.mkdir(parents=True)
    (real / "a.py").write_text("x = 1\n")
    (tmp_path / "root").mkdir()
    (tmp_path / "root" / "linked").symlink_to(real, target_is_directory=True)
    (tmp_path / "root" / "file_link.py").symlink_to(real / "a.py")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    monkeypatch.chdir(outside)
    for root in (tmp_path / "root", tmp_path / "real"):
        filt = PathFilter(root=root.resolve())
        for path in (
            tmp_path / "root" / "linked" / "a.py",
            tmp_path / "root" / "linked" / ".." / "file_link.py",
            tmp_path / "root" / "file_link.py",
            real / "a.py",
            real,
            tmp_path / "root",
            outside / "b.py",
            "b.py",
            "../root/linked/a.py",
            "/",
        ):
            assert filt.relative(path) == _relative_by_pathlib(root.resolve(), str(path)), path
