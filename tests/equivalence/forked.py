"""Program runs forked from a server that imported TensorFlow once (see `fork_server.py`).

The equivalence tests run a few hundred short programs, on current TF and on the oracle; each fresh
interpreter spends 5-7 s of CPU importing TensorFlow before a few seconds of training. A
`ForkServer` per interpreter, test process and import-time environment (`import_time_env`) pays
that once. `run` is `subprocess.run` for a
program file: same arguments, same exit status, output captured. `TFMIGRATE_FRESH_PROCESSES=1`
starts every program, cluster tasks included, in a fresh interpreter instead (to tell a fork
effect from a program's own).
"""

from __future__ import annotations

import atexit
import itertools
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SERVER = Path(__file__).with_name("fork_server.py")
STARTUP_TIMEOUT = 300


class Handle:
    """What `Child` and `FreshChild` share: `pid` leads a process group of its own."""

    pid: int

    def poll(self) -> int | None:
        raise NotImplementedError

    def wait(self, timeout: float | None = None) -> int:
        raise NotImplementedError

    def kill(self) -> None:
        """SIGKILL to the process group: the program and whatever it started."""
        if self.poll() is None:
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def wait_or_kill(child: Handle, timeout: float) -> bool:
    """Waits up to `timeout` s for `child`; True if it ended in time, else it is killed and reaped."""
    try:
        child.wait(timeout)
        return True
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()
        return False


class _Launcher:
    """Starts programs (`start`, each a `Handle`); `run` is `subprocess.run` on top."""

    def start(self, argv: list[str], cwd: Path, env: dict[str, str], *, stdout: Path, stderr: Path,
              code: str | None = None, stdin: Path | None = None):
        raise NotImplementedError

    def run(self, argv: list[str], cwd: Path, env: dict[str, str], timeout: float, *,
            code: str | None = None, input: str | None = None) -> subprocess.CompletedProcess:
        with tempfile.TemporaryDirectory(prefix="tfmigrate-forked-") as scratch:
            out, err, stdin = Path(scratch) / "stdout", Path(scratch) / "stderr", None
            if input is not None:
                stdin = Path(scratch) / "stdin"
                stdin.write_text(input, encoding="utf-8")
            child = self.start(argv, cwd, env, stdout=out, stderr=err, code=code, stdin=stdin)
            if not wait_or_kill(child, timeout):
                raise subprocess.TimeoutExpired(argv, timeout, _text(out), _text(err))
            return subprocess.CompletedProcess(argv, child.returncode, _text(out), _text(err))


class FreshChild(Handle):
    """A fresh interpreter (`TFMIGRATE_FRESH_PROCESSES=1`) behind `Child`'s interface."""

    def __init__(self, popen: subprocess.Popen) -> None:
        self.popen, self.pid = popen, popen.pid

    @property
    def returncode(self) -> int | None:
        return self.popen.returncode

    def poll(self) -> int | None:
        return self.popen.poll()

    def wait(self, timeout: float | None = None) -> int:
        return self.popen.wait(timeout)



class FreshLauncher(_Launcher):
    """Each program in a fresh `python` (its own session, as forked children have their own group)."""

    def __init__(self, python: str) -> None:
        self.python = python

    def start(self, argv: list[str], cwd: Path, env: dict[str, str], *, stdout: Path, stderr: Path,
              code: str | None = None, stdin: Path | None = None) -> FreshChild:
        command = [self.python, *argv] if code is None else [self.python, "-c", code, *argv]
        source = os.open(stdin or os.devnull, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO opens without a writer
        os.set_blocking(source, True)
        try:
            with open(stdout, "wb") as out, open(stderr, "ab" if stderr == stdout else "wb") as err:
                popen = subprocess.Popen(command, cwd=cwd, env=env, stdin=source, stdout=out,
                                         stderr=subprocess.STDOUT if stderr == stdout else err, start_new_session=True)
        finally:
            os.close(source)
        return FreshChild(popen)


class Child(Handle):
    """A program the server forked, as much of `subprocess.Popen` as the tests use."""

    def __init__(self, server: "ForkServer", argv: list[str], pid: int) -> None:
        self.server, self.args, self.pid = server, argv, pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        self.server._pump(0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.returncode is None:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise subprocess.TimeoutExpired(self.args, timeout)
            self.server._pump(left)
        return self.returncode



class ForkServer(_Launcher):
    """One `fork_server.py` process for `python`, its `preload` modules imported."""

    def __init__(self, python: str, preload: tuple[str, ...], env: dict[str, str]) -> None:
        self.python, self.preload = python, preload
        self._log = tempfile.TemporaryFile()  # The server's own stderr (its imports' warnings), for errors.
        self._proc = subprocess.Popen(
            [python, str(SERVER), *preload],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            env=env,
        )
        self._pending = b""
        self._ids = itertools.count()
        self._children: dict[int, Child] = {}
        reply = self._read(STARTUP_TIMEOUT)
        if reply != {"ready": True}:
            self.close()
            raise RuntimeError(f"fork server for {python} did not start in {STARTUP_TIMEOUT} s:\n{self._log_tail()}")

    def _log_tail(self) -> str:
        self._log.seek(0)
        return self._log.read().decode(errors="replace")[-4000:]

    def alive(self) -> bool:
        return self._proc.poll() is None

    def _read(self, timeout: float | None) -> dict | None:
        """The server's next message, or None when `timeout` seconds pass first."""
        deadline = None if timeout is None else time.monotonic() + timeout
        fd = self._proc.stdout.fileno()
        while b"\n" not in self._pending:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                return None
            chunk = os.read(fd, 65536)
            if not chunk:
                raise RuntimeError(f"fork server for {self.python} exited (status {self._proc.wait()}):\n{self._log_tail()}")
            self._pending += chunk
        line, self._pending = self._pending.split(b"\n", 1)
        return json.loads(line)

    def _pump(self, timeout: float | None) -> dict | None:
        """Reads the server's next message (within `timeout`) and records a child's end."""
        message = self._read(timeout)
        if message is not None and "returncode" in message:
            self._children.pop(message["id"]).returncode = message["returncode"]
        return message

    def start(self, argv: list[str], cwd: Path, env: dict[str, str], *, stdout: Path, stderr: Path,
              code: str | None = None, stdin: Path | None = None) -> Child:
        """Forks `python argv...` (`python -c code argv...`) in `cwd` with `env`, its output to files."""
        request = {"id": next(self._ids), "argv": argv, "cwd": str(cwd), "env": env, "stdout": str(stdout), "stderr": str(stderr)}
        if code is not None:
            request["code"] = code
        if stdin is not None:
            request["stdin"] = str(stdin)
        self._proc.stdin.write((json.dumps(request) + "\n").encode())
        self._proc.stdin.flush()
        while True:
            message = self._pump(STARTUP_TIMEOUT)
            if message is None:
                raise RuntimeError(f"fork server for {self.python} did not fork within {STARTUP_TIMEOUT} s")
            if message.get("id") == request["id"] and "pid" in message:
                child = self._children[request["id"]] = Child(self, argv, message["pid"])
                return child

    def close(self) -> None:
        """Ends the server; it kills the children still running."""
        if self._proc.poll() is None:
            self._proc.stdin.close()
            try:
                self._proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._proc.kill()
        self._log.close()


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""


_SERVERS: dict[tuple, ForkServer] = {}

# What an interpreter reads when it starts, or TensorFlow and its libraries when they are imported:
# a forked child keeps what its server read then, whatever its own request says. TensorFlow reads
# TF_ENABLE_ONEDNN_OPTS at `import tensorflow`, and oneDNN's kernels round otherwise than Eigen's (a
# fixture's oracle loss moved in its seventh digit); PYTHONHASHSEED orders sets of strings. A
# server serves only requests whose values of these match its own. TF_CONFIG is read when a
# cluster is resolved, in the child.
_IMPORT_TIME_PREFIXES = ("TF_", "TF2_", "OMP_", "KMP_", "MKL_", "ONEDNN_", "DNNL_", "OPENBLAS_", "XLA_", "CUDA_", "KERAS_")
_IMPORT_TIME_NAMES = frozenset({"PYTHONHASHSEED", "LD_PRELOAD", "LD_LIBRARY_PATH"})
_READ_IN_THE_CHILD = frozenset({"TF_CONFIG"})


def import_time_env(env: dict[str, str]) -> tuple[tuple[str, str], ...]:
    """The part of `env` that a child forked from a server started with it could not change."""
    return tuple(sorted(
        (name, value) for name, value in env.items()
        if (name.startswith(_IMPORT_TIME_PREFIXES) or name in _IMPORT_TIME_NAMES) and name not in _READ_IN_THE_CHILD
    ))


def server(python: str | Path, env: dict[str, str], preload: tuple[str, ...] | None = None) -> _Launcher:
    """This process's server for `python` with `preload` (by default `default_preload`) imported
    under `env`'s import-time variables (`import_time_env`), started on first use and again if it
    died; under `TFMIGRATE_FRESH_PROCESSES=1` a launcher of fresh interpreters instead."""
    python = str(python)
    if os.environ.get("TFMIGRATE_FRESH_PROCESSES") == "1":
        return FreshLauncher(python)
    preload = default_preload(python) if preload is None else preload
    key = (python, preload, import_time_env(env))
    found = _SERVERS.get(key)
    if found is None or not found.alive():
        found = _SERVERS[key] = ForkServer(python, preload, env)
    return found


@atexit.register
def _close_all() -> None:
    for found in _SERVERS.values():
        found.close()


def default_preload(python: str) -> tuple[str, ...]:
    """TensorFlow; on current TF (this interpreter) also the Keras 3 that `tf.keras` loads lazily."""
    return ("tensorflow", "keras") if python == sys.executable else ("tensorflow",)


def run(python: str | Path, argv: list[str], cwd: Path, env: dict[str, str], timeout: float, *,
        code: str | None = None, input: str | None = None,
        preload: tuple[str, ...] | None = None) -> subprocess.CompletedProcess:
    """`python argv...` (with `code`: `python -c code argv...`) in `cwd` with `env`, `input` on stdin,
    output captured as text: forked from this process's server for `python`, or a fresh interpreter."""
    return server(python, env, preload).run(argv, cwd, env, timeout, code=code, input=input)
