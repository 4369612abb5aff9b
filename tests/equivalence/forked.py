"""Program runs forked from a server that imported TensorFlow once (see `fork_server.py`).

The equivalence tests run a few hundred short programs, on current TF and on the oracle; each fresh
interpreter spends 5-7 s of CPU importing TensorFlow before a few seconds of training. A
`ForkServer` per interpreter and test process pays that once. `run` is `subprocess.run` for a
program file: same arguments, same exit status, output captured. `TFMIGRATE_FRESH_PROCESSES=1`
runs every program in a fresh interpreter instead (to tell a fork effect from a program's own).
"""

from __future__ import annotations

import atexit
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


class ForkServer:
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

    def run(self, argv: list[str], cwd: Path, env: dict[str, str], timeout: float, *,
            code: str | None = None, input: str | None = None) -> subprocess.CompletedProcess:
        with tempfile.TemporaryDirectory(prefix="tfmigrate-forked-") as scratch:
            out, err = Path(scratch) / "stdout", Path(scratch) / "stderr"
            request = {"argv": argv, "cwd": str(cwd), "env": env, "stdout": str(out), "stderr": str(err)}
            if code is not None:
                request["code"] = code
            if input is not None:
                (Path(scratch) / "stdin").write_text(input, encoding="utf-8")
                request["stdin"] = str(Path(scratch) / "stdin")
            self._proc.stdin.write((json.dumps(request) + "\n").encode())
            self._proc.stdin.flush()
            pid = self._read(STARTUP_TIMEOUT)["pid"]
            done = self._read(timeout)
            if done is None:
                os.killpg(pid, signal.SIGKILL)
                self._read(None)
                raise subprocess.TimeoutExpired(argv, timeout, _text(out), _text(err))
            return subprocess.CompletedProcess(argv, done["returncode"], _text(out), _text(err))

    def close(self) -> None:
        if self._proc.poll() is None:
            self._proc.stdin.close()
            try:
                self._proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._proc.kill()
        self._log.close()


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""


_SERVERS: dict[tuple[str, tuple[str, ...]], ForkServer] = {}


def server(python: str, preload: tuple[str, ...], env: dict[str, str]) -> ForkServer:
    """This process's server for `python` with `preload` imported (started on first use, again if it died)."""
    key = (python, preload)
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
    python = str(python)
    if os.environ.get("TFMIGRATE_FRESH_PROCESSES") == "1":
        command = [python, *argv] if code is None else [python, "-c", code, *argv]
        return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env, input=input)
    chosen = default_preload(python) if preload is None else preload
    return server(python, chosen, env).run(argv, cwd, env, timeout, code=code, input=input)
