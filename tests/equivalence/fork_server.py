"""Runs Python programs in children forked from one process that imported their heavy modules once.

    python fork_server.py MODULE...

imports each MODULE (`tensorflow`, `keras`: seconds of CPU each), then reads requests from stdin,
one JSON object a line: {"argv": [program, arg...], "cwd": ..., "env": {...}, "stdout": path,
"stderr": path}, optionally "code" (then argv holds only the arguments: `python -c code arg...`)
and "stdin" (a file to read instead of nothing). For each it forks a child that runs the program
as `python program arg...` would (`__main__`, `sys.argv`, `sys.path[0]` the program's folder or
"" for code, then the request's PYTHONPATH, stdout and stderr to the two files, exit status from
`SystemExit` or an uncaught exception, then the interpreter's shutdown: non-daemon threads
joined, atexit handlers run) and answers two lines: {"pid": N} when the child
starts (its own process group, so that a caller can kill it and whatever it started) and
{"returncode": N} when it ends (negative: the signal that ended it, as `subprocess` reports).

Nothing runs in this process but imports, so each child starts as a fresh interpreter would after
importing MODULE: no TensorFlow runtime, graph, thread pool or Keras state exists before the
program makes it. Standard library only: the oracle's interpreter (TF 2.15) runs this file too.
"""

import atexit
import importlib
import json
import os
import runpy
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
        _redirect(request["stderr"], 2, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
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


def main() -> None:
    for module in sys.argv[1:]:
        importlib.import_module(module)
    _answer({"ready": True})
    for line in sys.stdin:
        request = json.loads(line)
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _child(request)
        _answer({"pid": pid})
        _, wait_status = os.waitpid(pid, 0)
        _answer({"returncode": os.waitstatus_to_exitcode(wait_status)})


if __name__ == "__main__":
    main()
