"""A program forked from the fork server runs as it would in a fresh interpreter (forked.py)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from . import forked
from .oracle import quiet_env

PROGRAM = '''
import atexit, os, sys, threading, time
import helper  # next to the program: sys.path[0] is the program's folder

print("argv", sys.argv[1:], "name", __name__, "file", os.path.basename(__file__))
print("cwd", os.path.basename(os.getcwd()), "env", os.environ.get("FORKED_TEST"))
print("stdin", repr(sys.stdin.read()))
print("to stderr", file=sys.stderr)
atexit.register(print, "atexit ran")
threading.Thread(target=lambda: (time.sleep(0.2), print("thread joined"))).start()
mode = sys.argv[1]
if mode == "raise":
    raise ValueError("boom")
if mode == "exit-text":
    sys.exit("stopped")
if mode == "exit-3":
    sys.exit(3)
if mode == "sleep":
    time.sleep(60)
'''


@pytest.fixture
def program(tmp_path: Path) -> Path:
    folder = tmp_path / "prog"
    folder.mkdir()
    (folder / "helper.py").write_text("VALUE = 1\n")
    path = folder / "program.py"
    path.write_text(textwrap.dedent(PROGRAM))
    return path


def _both(program: Path, cwd: Path, *args: str, timeout: float = 60) -> tuple[subprocess.CompletedProcess, subprocess.CompletedProcess]:
    env = {**quiet_env(), "FORKED_TEST": "yes"}
    fresh = subprocess.run([sys.executable, str(program), *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=timeout)
    fork = forked.run(sys.executable, [str(program), *args], cwd, env, timeout, preload=())
    return fresh, fork


@pytest.mark.parametrize("mode", ["ok", "raise", "exit-text", "exit-3"])
def test_forked_run_matches_a_fresh_interpreter(program: Path, tmp_path: Path, mode: str) -> None:
    fresh, fork = _both(program, tmp_path, mode)
    assert fork.returncode == fresh.returncode == {"ok": 0, "raise": 1, "exit-text": 1, "exit-3": 3}[mode]
    assert fork.stdout == fresh.stdout
    assert "argv ['%s'] name __main__ file program.py" % mode in fork.stdout
    assert "env yes" in fork.stdout and "stdin ''" in fork.stdout
    assert fork.stdout.rstrip().endswith("thread joined\natexit ran")
    assert "to stderr" in fork.stderr
    if mode == "raise":
        assert "ValueError: boom" in fork.stderr and "ValueError: boom" in fresh.stderr
    if mode == "exit-text":
        assert fork.stderr.rstrip().endswith("stopped")


def test_a_forked_run_past_its_timeout_is_killed_and_the_server_goes_on(program: Path, tmp_path: Path) -> None:
    with pytest.raises(subprocess.TimeoutExpired):
        forked.run(sys.executable, [str(program), "sleep"], tmp_path, quiet_env(), 2, preload=())
    again = forked.run(sys.executable, [str(program), "ok"], tmp_path, quiet_env(), 60, preload=())
    assert again.returncode == 0 and "atexit ran" in again.stdout


@pytest.mark.tf
def test_a_tensorflow_program_gives_the_same_numbers_forked(tmp_path: Path) -> None:
    """TensorFlow imported in the server: the child still builds its own runtime, threads and state."""
    path = tmp_path / "tf_program.py"
    path.write_text(textwrap.dedent('''
        import tensorflow as tf
        import keras
        tf.config.set_logical_device_configuration(
            tf.config.list_physical_devices("CPU")[0], [tf.config.LogicalDeviceConfiguration()] * 2)
        print(len(tf.config.list_logical_devices("CPU")), "logical CPUs")
        keras.utils.set_random_seed(3)
        model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
        print(model.layers[0].name, float(tf.reduce_sum(model(tf.ones((2, 4))))))
        print(float(tf.random.uniform(())))
    '''))
    env = quiet_env()
    fresh = subprocess.run([sys.executable, str(path)], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=300)
    fork = forked.run(sys.executable, [str(path)], tmp_path, env, 300, preload=("tensorflow", "keras"))
    assert fresh.returncode == fork.returncode == 0, fork.stderr[-3000:]
    assert fork.stdout == fresh.stdout
    assert fork.stdout.startswith("2 logical CPUs\ndense ")


def test_a_run_gets_the_import_time_environment_it_asks_for(tmp_path: Path) -> None:
    """What the interpreter reads at start (PYTHONHASHSEED) or TensorFlow at import
    (TF_ENABLE_ONEDNN_OPTS) cannot change in a forked child: a run whose values differ from a
    running server's gets a server of its own, and prints what a fresh interpreter prints."""
    code = "import os\nprint(hash('tfmigrate'), os.environ.get('TF_ENABLE_ONEDNN_OPTS'))\n"
    first = {**quiet_env(), "PYTHONHASHSEED": "1", "TF_ENABLE_ONEDNN_OPTS": "1"}
    second = {**quiet_env(), "PYTHONHASHSEED": "2", "TF_ENABLE_ONEDNN_OPTS": "0"}
    outputs = {}
    for name, env in (("first", first), ("second", second)):
        fresh = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=60)
        fork = forked.run(sys.executable, [], tmp_path, env, 60, code=code, preload=())
        assert fork.returncode == fresh.returncode == 0
        assert fork.stdout == fresh.stdout
        outputs[name] = fork.stdout
    assert outputs["first"] != outputs["second"]
    assert forked.server(sys.executable, first, ()) is not forked.server(sys.executable, second, ())
    assert forked.server(sys.executable, {**first, "TF_CONFIG": "{}", "OTHER": "x"}, ()) is forked.server(sys.executable, first, ())


def test_code_and_stdin_run_as_python_dash_c(tmp_path: Path) -> None:
    code = "import os, sys\nprint(sys.argv, repr(sys.path[0]), __name__, os.path.basename(os.getcwd()))\nprint(sys.stdin.read().upper())\n"
    fresh = subprocess.run([sys.executable, "-c", code, "a", "b"], cwd=tmp_path, capture_output=True, text=True,
                           env=quiet_env(), input="payload", timeout=60)
    fork = forked.run(sys.executable, ["a", "b"], tmp_path, quiet_env(), 60, code=code, input="payload", preload=())
    assert fork.returncode == fresh.returncode == 0
    assert fork.stdout == fresh.stdout == f"['-c', 'a', 'b'] '' __main__ {tmp_path.name}\nPAYLOAD\n"


def test_each_run_gets_the_pythonpath_of_its_own_env(tmp_path: Path) -> None:
    """The server started with one PYTHONPATH; a run asking for another sees only its own."""
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / f"mod_{name}.py").write_text(f"WHERE = {name!r}\n")
    code = "import importlib, sys\nfor name in sys.argv[1:]:\n    try:\n        print(importlib.import_module(name).WHERE)\n    except ImportError:\n        print('no', name)\n"
    started = {**quiet_env(), "PYTHONPATH": str(tmp_path / "a")}
    server = forked.ForkServer(sys.executable, (), started)
    try:
        own = server.run(["mod_a", "mod_b"], tmp_path, started, 60, code=code)
        other = server.run(["mod_a", "mod_b"], tmp_path, {**quiet_env(), "PYTHONPATH": str(tmp_path / "b")}, 60, code=code)
    finally:
        server.close()
    assert own.stdout == "a\nno mod_b\n", own.stderr
    assert other.stdout == "no mod_a\nb\n", other.stderr


def test_children_run_side_by_side_and_end_on_their_own(tmp_path: Path) -> None:
    """A cluster's processes: one waits on its stdin (a FIFO) while another starts and ends; a
    killed child takes the processes it started with it."""
    import os
    import signal

    server = forked.ForkServer(sys.executable, (), quiet_env())
    try:
        fifo = tmp_path / "stdin"
        os.mkfifo(fifo)
        log = tmp_path / "reader.log"
        reader = server.start([], tmp_path, quiet_env(), stdout=log, stderr=log, stdin=fifo,
                              code="import sys\nprint('got', sys.stdin.read())\n")
        quick = server.start([], tmp_path, quiet_env(), stdout=tmp_path / "quick.out", stderr=tmp_path / "quick.err",
                             code="print('quick')\n")
        assert quick.wait(60) == 0 and (tmp_path / "quick.out").read_text() == "quick\n"
        assert reader.poll() is None
        with open(fifo, "w") as writer:
            writer.write("hello")
        assert reader.wait(60) == 0 and log.read_text() == "got hello\n"

        spawner = server.start([], tmp_path, quiet_env(), stdout=tmp_path / "spawner.out", stderr=tmp_path / "spawner.err",
                               code="import subprocess, time\np = subprocess.Popen(['sleep', '60'])\nprint(p.pid, flush=True)\ntime.sleep(60)\n")
        out = tmp_path / "spawner.out"
        for _ in range(600):
            if out.exists() and out.read_text().strip():
                break
            spawner.server._pump(0.05)
        grandchild = int(out.read_text())
        spawner.kill()
        assert spawner.wait(60) == -signal.SIGKILL
        for _ in range(100):  # the group's kill reaches it (gone, or a zombie no one has reaped yet)
            try:
                if Path(f"/proc/{grandchild}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                    break
            except (FileNotFoundError, ProcessLookupError):
                break
            server._pump(0.05)
        else:
            raise AssertionError("the child's own child outlived the kill")
    finally:
        server.close()


@pytest.mark.oracle
@pytest.mark.tf
@pytest.mark.parametrize("side", ["oracle", "current"])
def test_an_equivalence_program_prints_the_same_forked_as_fresh(side: str, tmp_path: Path) -> None:
    """A fixture program on the oracle (TF1 graph mode, Estimator) and its migration on current TF
    (the runtime, Keras): every printed digit the same from the fork server as from a fresh interpreter."""
    from conftest import FIXTURES

    from .oracle import oracle_python

    case = FIXTURES / "TFM301_tpu_estimator_to_keras" / "linear_warmup_polynomial_decay"
    source, python = (case.with_suffix(".in.py"), oracle_python()) if side == "oracle" else (case.with_suffix(".out.py"), sys.executable)
    outputs = []
    for how in ("fresh", "forked"):
        directory = tmp_path / how
        directory.mkdir()
        (directory / "program.py").write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
        if how == "fresh":
            done = subprocess.run([str(python), "program.py"], cwd=directory, capture_output=True, text=True,
                                  env=quiet_env(), timeout=600)
        else:
            done = forked.run(python, [str(directory / "program.py")], directory, quiet_env(), 600)
        assert done.returncode == 0, done.stderr[-3000:]
        outputs.append(done.stdout)
    assert "eval_results" in outputs[0]
    assert outputs[1] == outputs[0]


def test_fresh_processes_take_the_same_requests(program: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`TFMIGRATE_FRESH_PROCESSES=1`: runs and started processes (a FIFO stdin included) in fresh interpreters."""
    import os

    monkeypatch.setenv("TFMIGRATE_FRESH_PROCESSES", "1")
    launcher = forked.server(sys.executable, quiet_env(), ())
    assert isinstance(launcher, forked.FreshLauncher)
    done = forked.run(sys.executable, [str(program), "exit-3"], tmp_path, {**quiet_env(), "FORKED_TEST": "yes"}, 60)
    assert done.returncode == 3 and "env yes" in done.stdout and "to stderr" in done.stderr
    fifo, log = tmp_path / "stdin", tmp_path / "reader.log"
    os.mkfifo(fifo)
    reader = launcher.start([], tmp_path, quiet_env(), stdout=log, stderr=log, stdin=fifo,
                            code="import sys\nprint('got', sys.stdin.read())\n")
    with open(fifo, "w") as writer:
        writer.write("hello")
    assert reader.wait(60) == 0 and log.read_text() == "got hello\n"
