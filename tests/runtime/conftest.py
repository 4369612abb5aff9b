"""Runtime test setup: two logical CPUs for MirroredStrategy, the TF 2.15 oracle, fresh warnings.

The logical CPU split must happen before TensorFlow initialises its devices, i.e. before any op
runs in the process, so it is done when pytest imports this conftest.
"""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf  # noqa: E402

NUM_LOGICAL_CPUS = 2
_cpu_split_error: str | None = None
try:
    _cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(_cpu, [tf.config.LogicalDeviceConfiguration()] * NUM_LOGICAL_CPUS)
except RuntimeError as error:  # TensorFlow was initialised before this conftest was imported.
    _cpu_split_error = str(error)



@pytest.fixture
def two_cpus() -> list[str]:
    """The names of the two logical CPUs (fails, with the reason, if they could not be created)."""
    devices = [device.name for device in tf.config.list_logical_devices("CPU")]
    assert len(devices) >= NUM_LOGICAL_CPUS, f"need {NUM_LOGICAL_CPUS} logical CPUs, got {devices}: {_cpu_split_error}"
    return devices[:NUM_LOGICAL_CPUS]


@pytest.fixture(autouse=True)
def _fresh_warnings():
    """Each test sees the runtime's once-per-process warnings again."""
    from tfmigrate.runtime import _logging

    _logging._warned.clear()
    yield


def run_oracle(script: str, payload: Any = None, *, timeout: float = 300) -> Any:
    """Runs `script` on the TF 2.15 + Estimator oracle python and returns the JSON it prints last.

    The script reads `PAYLOAD` (JSON-decoded `payload`) and must `print(json.dumps(result))`.
    """
    from equivalence import forked
    from equivalence.oracle import oracle_python  # builds the oracle venv on first use; never skips

    prelude = "import json, os, sys\nos.environ['TF_CPP_MIN_LOG_LEVEL'] = '3'\nPAYLOAD = json.loads(sys.stdin.read())\n"
    proc = forked.run(oracle_python(), [], Path.cwd(), dict(os.environ), timeout,
                      code=prelude + textwrap.dedent(script), input=json.dumps(payload))
    assert proc.returncode == 0, f"oracle script failed:\n{proc.stderr[-4000:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture
def model_fn_step_calls(monkeypatch: pytest.MonkeyPatch) -> dict:
    """The strategy tier's function calls, by function: each call's step count (its last argument)."""
    from tfmigrate.runtime.model_fn.strategy import runner as runner_module

    calls: dict = {}
    made = runner_module.ModelFnRunner._function

    def counted(self, key, python_function, mode):
        function = made(self, key, python_function, mode)

        def call(*args):
            calls.setdefault(key, []).append(int(args[-1]) if len(args) > 1 else None)
            return function(*args)

        call.traced = function
        return call

    monkeypatch.setattr(runner_module.ModelFnRunner, "_function", counted)
    return calls
