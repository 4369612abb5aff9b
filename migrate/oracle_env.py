"""The oracle environment: the last TensorFlow with Estimator, in a venv tfmigrate owns.

`tfmigrate verify` runs the original program there, and so do the tests' equivalence programs.
It never imports TensorFlow itself (it is part of the codemod): it builds and runs that venv.

`oracle_python()` returns the interpreter of a virtual environment holding exactly
tensorflow-cpu 2.15.1 + tensorflow-estimator 2.15.0 (Python 3.11), creating it on first use
(about a minute) and reusing it afterwards. It lives under `$TFMIGRATE_CACHE`
(default `~/.cache/tfmigrate`); a marker file records the pinned spec, so a change of pins
rebuilds it. A lock keeps parallel test processes from building it twice.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Callable

ORACLE_PINS = ("tensorflow-cpu==2.15.1", "tensorflow-estimator==2.15.0")
# Packages TF1 programs imported beside TF: `tf_slim` is where `tf.contrib.layers`/slim went (the
# oracle runs contrib-era layer code from it); TensorFlow Addons (its last release for TF 2.15) is
# where `tf.contrib.crf` went (with `typeguard`, which it needs: extras install without their
# dependencies); `sentencepiece` is imported by ALBERT's tokenization (tests/real_programs); pandas
# (with its dependencies TF does not bring) is what `tf.estimator.inputs.pandas_input_fn` programs feed.
# Installed on top of the pinned TF, so adding one does not rebuild the venv.
ORACLE_EXTRAS = ("tf-slim==1.1.0", "sentencepiece==0.2.1", "tensorflow-addons==0.23.0", "typeguard==2.13.3",
                 "pandas==2.2.3", "python-dateutil==2.9.0.post0", "pytz==2024.2", "tzdata==2024.2")
_MARKER = ".tfmigrate-oracle"
_EXTRAS_MARKER = ".tfmigrate-oracle-extras"


def cache_dir() -> Path:
    return Path(os.environ.get("TFMIGRATE_CACHE", Path.home() / ".cache" / "tfmigrate"))


def oracle_dir() -> Path:
    return cache_dir() / "oracle-py311-tf2.15"


def _spec() -> str:
    return " ".join(ORACLE_PINS) + " python3.11"


def _base_python() -> str:
    """A Python 3.11 to build the venv with: TF 2.15 supports nothing newer."""
    given = os.environ.get("TFMIGRATE_ORACLE_PYTHON")
    if given:
        return given
    if sys.version_info[:2] == (3, 11):
        return getattr(sys, "_base_executable", sys.executable)
    found = shutil.which("python3.11")
    if found:
        return found
    raise RuntimeError(
        "the oracle (TensorFlow 2.15 + Estimator) needs a Python 3.11 interpreter and none was found: "
        "install python3.11 or set TFMIGRATE_ORACLE_PYTHON to one"
    )


def oracle_python(progress: Callable[[str], None] | None = None) -> Path:
    """Path of the oracle interpreter, building the venv if needed (`progress` hears about it)."""
    root = oracle_dir()
    python = root / "bin" / "python"
    cache_dir().mkdir(parents=True, exist_ok=True)
    with open(cache_dir() / "oracle.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        marker = root / _MARKER
        if python.exists() and marker.exists() and marker.read_text() == _spec() and _imports_ok(python):
            _install_extras(python)
            return python
        base = _base_python()
        if progress is not None:
            progress(f"building the oracle environment ({' + '.join(ORACLE_PINS)}) in {root}; this takes a minute or two")
        if root.exists():
            shutil.rmtree(root)
        subprocess.run([base, "-m", "venv", str(root)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *ORACLE_PINS],
            check=True,
        )
        if not _imports_ok(python):
            raise RuntimeError(f"the oracle venv at {root} was built but cannot import tf.compat.v1.estimator.tpu")
        marker.write_text(_spec())
        _install_extras(python)
    return python


def _install_extras(python: Path) -> None:
    marker = python.parent.parent / _EXTRAS_MARKER
    want = " ".join(ORACLE_EXTRAS)
    if marker.exists() and marker.read_text() == want:
        return
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps", *ORACLE_EXTRAS],
        check=True,
    )
    marker.write_text(want)


def _imports_ok(python: Path) -> bool:
    probe = "import tensorflow as tf; assert tf.__version__ == '2.15.1'; tf.compat.v1.estimator.tpu.TPUEstimator"
    proc = subprocess.run([str(python), "-c", probe], capture_output=True, env=quiet_env())
    return proc.returncode == 0


def quiet_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        TF_CPP_MIN_LOG_LEVEL="2",
        CUDA_VISIBLE_DEVICES="",
        PYTHONHASHSEED="0",
        TF_ENABLE_ONEDNN_OPTS="0",
    )
    env.pop("TF_USE_LEGACY_KERAS", None)
    return env


def oracle_run_env() -> dict[str, str]:
    """`quiet_env()` for a program run on the oracle: one inter-op thread (unless the caller's
    environment sets `TF_NUM_INTEROP_THREADS`).

    A TF1 step that reads a variable and writes it with no order between the two (BERT's
    hand-written `global_step.assign(global_step + 1)` beside the learning rate's read of the
    step) races in TF 1.x's executor: the read usually runs first, but on a loaded machine the
    write sometimes does, and the run trains differently. One inter-op thread runs each step's
    ops in one fixed order, in which the reads run first (measured on the hosted BERT-style
    program: every run reads first with it; a CI run without it read after the write). That is
    the order the runtime guarantees ("Reads before writes within a step", docs/runtime.md), so
    the reference is the one valid outcome of the race the migration reproduces."""
    env = quiet_env()
    env.setdefault("TF_NUM_INTEROP_THREADS", "1")
    return env
