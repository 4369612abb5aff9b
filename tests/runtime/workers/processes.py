"""Launching the processes of a multi-process strategy test, with bounded waits and certain cleanup.

`ProcessGroup` starts `strategy_worker.py` processes (each in its own session, logging to its own
file) and, on leaving its `with` block, SIGKILLs every one still running. Every wait has a deadline;
a failure message carries the tail of each process's log.
"""

from __future__ import annotations

import errno
import json
import os
import random
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

from equivalence import forked

WORKER = Path(__file__).resolve().parent / "strategy_worker.py"


# Ports for the test clusters come from below the kernel's ephemeral range, so no socket that
# binds port 0 or connects out (gRPC channels, another test's free-port probe) can take one between
# the probe here and the server's bind in its process. Each xdist worker (PYTEST_XDIST_WORKER=gwN)
# draws from a block of its own, so two tests running at once never pick the same port; within the
# block ports are handed out in turn from a random start (another test session on the machine),
# each one checked free by binding it.
_PORT_FLOOR = 10000
_BLOCK = 1000
_next_offset: dict[int, int] = {}  # Block start -> offset of the next port to try.


def _ephemeral_floor() -> int:
    try:
        return int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def _bindable(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _os_assigned_ports(count: int) -> list[int]:
    sockets = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind(("127.0.0.1", 0))
            sockets.append(sock)
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def free_ports(count: int) -> list[int]:
    """`count` distinct free TCP ports on 127.0.0.1, none handed out before by this process."""
    blocks = (_ephemeral_floor() - _PORT_FLOOR) // _BLOCK
    if blocks < 1:  # No room below the ephemeral range: let the kernel pick.
        return _os_assigned_ports(count)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    index = int(worker[2:]) if worker.startswith("gw") and worker[2:].isdigit() else 0
    start = _PORT_FLOOR + (index % blocks) * _BLOCK
    ports: list[int] = []
    for _ in range(_BLOCK):
        offset = _next_offset.setdefault(start, random.randrange(_BLOCK))
        _next_offset[start] = (offset + 1) % _BLOCK
        if _bindable(start + offset):
            ports.append(start + offset)
            if len(ports) == count:
                return ports
    raise RuntimeError(f"no {count} free ports in {start}-{start + _BLOCK - 1}")


def local_cluster(**jobs: int) -> dict[str, list[str]]:
    """A cluster spec on 127.0.0.1 with free ports, e.g. local_cluster(worker=2)."""
    ports = iter(free_ports(sum(jobs.values())))
    return {job: [f"127.0.0.1:{next(ports)}" for _ in range(count)] for job, count in jobs.items()}


def tf_config(cluster: dict[str, list[str]], task_type: str, index: int) -> str:
    return json.dumps({"cluster": cluster, "task": {"type": task_type, "index": index}})


class Process:
    """A worker forked from the test process's TensorFlow server (`equivalence/forked.py`); `popen`
    is its `forked.Handle` (poll, wait, kill, pid, returncode), `stdin_fd` the writing end of its stdin."""

    def __init__(self, name: str, popen: forked.Handle, log: Path, out: Path | None, stdin_fd: int | None) -> None:
        self.name, self.popen, self.log, self.out, self.stdin_fd = name, popen, log, out, stdin_fd

    def log_tail(self, chars: int = 3000) -> str:
        try:
            text = self.log.read_text(errors="replace")
        except OSError:
            return "<no log>"
        lines = [line for line in text.splitlines() if not line.startswith(("I0000", "W0000", "E0000"))]
        return "\n".join(lines)[-chars:]

    def result(self) -> Any:
        assert self.out is not None and self.out.exists(), f"{self.name} wrote no result:\n{self.log_tail()}"
        return json.loads(self.out.read_text())


def _open_writer(fifo: Path, child: forked.Handle, timeout: float = 60) -> int | None:
    """The writing end of `fifo` once `child` has opened it to read (None if it ended first)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as error:
            if error.errno != errno.ENXIO:  # ENXIO: no reader yet
                raise
        else:
            os.set_blocking(fd, True)
            return fd
        if child.poll() is not None:
            return None
        if time.monotonic() > deadline:
            raise AssertionError(f"{fifo.name}: the worker did not open its stdin within {timeout}s")
        time.sleep(0.01)


class ProcessGroup:
    """The processes of one test; all of them are SIGKILLed when the `with` block is left."""

    def __init__(self, directory: Path, deadline_s: float) -> None:
        self.directory = directory
        self.deadline_s = deadline_s
        self.processes: list[Process] = []

    def __enter__(self) -> "ProcessGroup":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        for process in self.processes:
            self.kill(process)

    def start(self, name: str, spec: dict[str, Any], *, tf_config: str | None = None) -> Process:
        env = {k: v for k, v in os.environ.items() if k != "TF_CONFIG"}
        env.update(TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="-1", PYTHONUNBUFFERED="1")
        if tf_config is not None:
            env["TF_CONFIG"] = tf_config
        out = self.directory / f"{name}.json"
        spec = {"out": str(out), "deadline_s": self.deadline_s, **spec}
        log = self.directory / f"{name}.log"
        stdin = self.directory / f"{name}.stdin"
        os.mkfifo(stdin)
        child = forked.server(sys.executable, env).start(
            [str(WORKER), json.dumps(spec)], Path.cwd(), env, stdout=log, stderr=log, stdin=stdin)
        process = Process(name, child, log, out, _open_writer(stdin, child))
        self.processes.append(process)
        return process

    def kill(self, process: Process) -> None:
        process.popen.kill()  # Its own process group: it and its children.
        try:
            process.popen.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        if process.stdin_fd is not None:
            os.close(process.stdin_fd)
            process.stdin_fd = None

    def wait(self, processes: list[Process], timeout: float) -> None:
        """Waits for `processes` to exit; fails (with their logs) on a timeout or a nonzero exit."""
        deadline = time.monotonic() + timeout
        for process in processes:
            try:
                rc = process.popen.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                logs = "\n".join(f"--- {p.name}:\n{p.log_tail()}" for p in processes)
                raise AssertionError(f"{process.name} did not finish within {timeout}s\n{logs}") from None
            assert rc == 0, f"{process.name} exited with {rc}:\n{process.log_tail()}"

    def wait_until(self, condition: Callable[[], bool], what: str, timeout: float, watched: list[Process]) -> None:
        """Waits until `condition()`; fails if it is not met in time or a watched process exits first."""
        deadline = time.monotonic() + timeout
        while not condition():
            for process in watched:
                if process.popen.poll() is not None:
                    raise AssertionError(
                        f"{process.name} exited ({process.popen.returncode}) before {what}:\n{process.log_tail()}"
                    )
            if time.monotonic() > deadline:
                logs = "\n".join(f"--- {p.name}:\n{p.log_tail()}" for p in watched)
                raise AssertionError(f"not {what} within {timeout}s\n{logs}")
            time.sleep(0.05)

    def wait_for_file(self, path: Path, timeout: float, watched: list[Process]) -> None:
        """Waits until `path` exists; fails if it does not appear in time or a watched process exits first."""
        self.wait_until(path.exists, f"{path.name} appeared", timeout, watched)
