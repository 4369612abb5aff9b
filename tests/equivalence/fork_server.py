"""Runs Python programs in children forked from one process that imported their heavy modules once.

    python fork_server.py MODULE...

imports each MODULE (`tensorflow`, `keras`: seconds of CPU each), then reads requests from stdin,
one JSON object a line: {"id": ..., "argv": [program, arg...], "cwd": ..., "env": {...}, "stdout":
path, "stderr": path}, optionally "code" (then argv holds only the arguments: `python -c code
arg...`) and "stdin" (a file to read, a FIFO included, instead of nothing); "stdout" and "stderr"
may name one file. For each it forks a child that runs the program as `python program arg...`
would: `__main__`, `sys.argv`, `sys.path[0]` the program's folder ("" for code) and then the
request's PYTHONPATH, stdout and stderr to the files (unbuffered under PYTHONUNBUFFERED), the exit
status from `SystemExit` or an uncaught exception, then the interpreter's shutdown (non-daemon
threads joined, atexit handlers run). It answers {"id": ..., "pid": N} at once (the child leads
its own process group, so that a caller can kill it and whatever it started) and {"id": ...,
"returncode": N} when it ends (negative: the signal that ended it, as `subprocess` reports).
Children run side by side; when stdin closes, the server kills those still running and exits.

Nothing runs in this process but imports, so each child starts as a fresh interpreter would after
importing MODULE: no TensorFlow runtime, graph, thread pool or Keras state exists before the
program makes it. What the interpreter and those imports read from the environment (the hash
seed, TF_ENABLE_ONEDNN_OPTS) is the server's, not the request's: `forked.server` keeps one server
per value of those (`forked.import_time_env`). Standard library only: the oracle's interpreter
(TF 2.15) runs this file too.
"""

import atexit
import importlib
import io
import json
import os
import runpy
import select
import signal
import sys
import threading
import traceback
import types


def _exit_status(code) -> int:
    """What the interpreter makes of `sys.exit(code)`."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _redirect(path: str, fd: int, flags: int) -> None:
    target = os.open(path, flags, 0o644)
    os.dup2(target, fd)
    os.close(target)


def _unbuffered(stream):
    binary = open(stream.fileno(), "wb", buffering=0, closefd=False)
    return io.TextIOWrapper(binary, encoding=stream.encoding, errors=stream.errors, write_through=True)


def _python_path(env) -> list:
    """The `sys.path` entries an interpreter started with `env` takes from its PYTHONPATH."""
    return [os.path.abspath(entry) for entry in env.get("PYTHONPATH", "").split(os.pathsep) if entry]


_OWN_PYTHON_PATH = _python_path(os.environ)


def _set_python_path(env) -> None:
    """`sys.path` as a fresh interpreter started with `env` has it: this server's PYTHONPATH entries
    (right after `sys.path[0]`) give way to the request's."""
    rest = sys.path[1:]
    for entry in _OWN_PYTHON_PATH:
        if entry in rest:
            rest.remove(entry)
    sys.path[1:] = _python_path(env) + rest


def _run_main(request: dict) -> None:
    """`python program arg...`, or with "code" in the request `python -c code arg...`."""
    _set_python_path(request["env"])
    if "code" in request:
        sys.argv = ["-c", *request["argv"]]
        sys.path[0] = ""
        main = types.ModuleType("__main__")
        sys.modules["__main__"] = main
        exec(compile(request["code"], "<string>", "exec"), main.__dict__)
        return
    program = request["argv"][0]
    sys.argv = list(request["argv"])
    sys.path[0] = os.path.dirname(os.path.abspath(program))
    runpy.run_path(program, run_name="__main__")


def _child(request: dict) -> None:
    """Runs in the forked child; never returns."""
    status = 1
    try:
        os.setpgid(0, 0)
        _redirect(request.get("stdin") or os.devnull, 0, os.O_RDONLY)
        _redirect(request["stdout"], 1, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        if request["stderr"] == request["stdout"]:
            os.dup2(1, 2)
        else:
            _redirect(request["stderr"], 2, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        if os.environ.get("PYTHONUNBUFFERED"):  # `python -u`: every write reaches the file at once
            sys.stdout, sys.stderr = (_unbuffered(stream) for stream in (sys.stdout, sys.stderr))
        try:
            _run_main(request)
            status = 0
        except SystemExit as stop:
            status = _exit_status(stop.code)
        except BaseException:
            traceback.print_exc()
            status = 1
        threading._shutdown()  # What the interpreter does at exit: join non-daemon threads, then atexit.
        atexit._run_exitfuncs()
    except BaseException:
        traceback.print_exc()
        status = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:
                pass
        os._exit(status)


def _answer(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


class _Server:
    """One thread, no waiting on a child: requests and child exits (SIGCHLD, through a wake-up
    pipe) are served as they come, so several children run at once (a cluster's processes)."""

    def __init__(self) -> None:
        self.children: dict[int, object] = {}  # pid -> the request's id
        self.pending = b""
        self.wake_read, self.wake_write = os.pipe()
        os.set_blocking(self.wake_read, False)
        os.set_blocking(self.wake_write, False)
        signal.set_wakeup_fd(self.wake_write)
        signal.signal(signal.SIGCHLD, lambda *_: None)

    def start(self, request: dict) -> None:
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            os.close(self.wake_read)
            os.close(self.wake_write)
            _child(request)
        self.children[pid] = request.get("id")
        _answer({"id": request.get("id"), "pid": pid})

    def reap(self) -> None:
        while self.children:
            pid, wait_status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                return
            _answer({"id": self.children.pop(pid), "returncode": os.waitstatus_to_exitcode(wait_status)})

    def serve(self) -> None:
        """Until stdin closes; then the children still running are killed (their process groups)."""
        while True:
            ready, _, _ = select.select([0, self.wake_read], [], [])
            if self.wake_read in ready:
                try:
                    while os.read(self.wake_read, 4096):
                        pass
                except BlockingIOError:
                    pass
            self.reap()
            if 0 in ready:
                chunk = os.read(0, 65536)
                if not chunk:
                    break
                self.pending += chunk
                while b"\n" in self.pending:
                    line, self.pending = self.pending.split(b"\n", 1)
                    self.start(json.loads(line))
        for pid in list(self.children):
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(pid, 0)


def main() -> None:
    for module in sys.argv[1:]:
        importlib.import_module(module)
    server = _Server()
    _answer({"ready": True})
    server.serve()


if __name__ == "__main__":
    main()
