"""How fast the codemod migrates published TF1 code, by kind, against `tf_upgrade_v2` and bare LibCST.

The corpus is published code of three kinds, each its own row (`SOURCES`):

- **library**: large TF1-era packages from PyPI (`tensor2tensor`, `mesh-tensorflow`, `adanet`,
  `tensorflow-estimator`'s own sources);
- **estimator programs**: what users migrate: BERT and ALBERT from PyPI, and public repositories
  at a pinned commit: tensorflow/tpu's `models/`, GoogleCloudPlatform/cloudml-samples and
  google-research/electra;
- **notebooks**: those repositories' `.ipynb` files, timed against the same code as `.py` files
  (each notebook's code cells joined as `tfmigrate` joins them).

Wheels are downloaded (`pip download --no-deps`, unzipped, never installed) and repositories
fetched as GitHub tarballs of the pinned commit into `$TFMIGRATE_CACHE/real-code/` on first use
(`--git-dir owner/name=PATH` reads one from a local clone instead, offline); no line of them is
kept in this repository. Each row times, in fresh processes, alternating, best of `--repeats`:
`tfmigrate -j 1` writing migrated copies (`--out-dir`) against `tf_upgrade_v2 --intree` (the
TF 2.15 oracle venv) on the same files, and bare `libcst.parse_module(src).code` in one process.
Before the rows, the start-up: `tfmigrate --version` and `--check` of a two-line file (bar 0.3 s).
`tf_upgrade_v2` runs through `tf_upgrade_v2_isolated.py`, which skips a file pasta cannot annotate
where `tf_upgrade_v2` itself stops the tree (on the estimator row it stopped after 115 of 700
files, and until 2026-12-06 that partial run was timed: the row's ratios before then are wrong).
Then, over all the `.py` files: `-j N` against `-j 1` (and the machine's own ceiling for N
processes), the peak memory, and each file migrated alone in one process (`transform_source`):
the median file's lines/s, the ten slowest, the estimator programs' time against LibCST's parse
and codegen of the same file, and their lines/s by file size.

`--sha1 FILE` writes the sha1 of every file `-j 1` wrote; `--against FILE` compares with such a
list from another commit (the output must not move when only speed changes).

    python benchmarks/bench_real_code.py                          # every source; ~15 minutes
    python benchmarks/bench_real_code.py --kinds estimator,notebooks --repeats 1
    python benchmarks/bench_real_code.py --git-dir tensorflow/tpu=$HOME/src/tpu --kinds estimator
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import resource
import shutil
import re
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

# kind -> sources: a PyPI requirement, or `github:owner/name@commit` (`:dir,dir` for part of it)
SOURCES = {
    "library": ("tensor2tensor==1.15.7", "mesh-tensorflow==0.1.21", "adanet==0.9.0", "tensorflow-estimator==2.15.0"),
    "estimator": (
        "bert-tensorflow==1.0.4",
        "albert-tensorflow==1.1",
        "github:tensorflow/tpu@7dc921f846c9e4071f3884b768a7ddf521272a49:models",
        "github:GoogleCloudPlatform/cloudml-samples@efddc4a9898127e55edc0946557aca4bfaf59705",
        "github:google-research/electra@8a46635f32083ada044d7e9ad09604742600ee7b",
    ),
}
KINDS = ("library", "estimator", "notebooks")  # notebooks: the .ipynb files of the estimator sources
_MARKER = ".tfmigrate-unpacked"
_KEPT = (".py", ".ipynb")

_PER_FILE = """
import json, sys, time, pathlib
import libcst
from tfmigrate.engine import transform_source
# The modules the codemod imports on first need (LibCST's codemod visitors and metadata), imported
# before the clock starts: the first file to need one would otherwise be charged the import.
import libcst.codemod.visitors, libcst.metadata
# Each file's best time over `repeats` passes over the whole corpus (one file timed once swings
# with the machine's noise; passes over the corpus, not back-to-back runs of one file, so that no
# cache of the last few texts serves a file its own earlier run); LibCST's own parse and codegen
# of the file likewise.
texts = [(path, path.read_text(encoding='utf-8', errors='replace')) for path in sorted(pathlib.Path(sys.argv[1]).rglob('*.py'))]
best, status, floor = {}, {}, {}
for _ in range(int(sys.argv[2])):
    for path, text in texts:
        start = time.perf_counter()
        try:
            transform_source(text, filename=str(path))
            status[path] = 'ok'
        except Exception as error:  # a file the codemod fails on is timed too, and named
            status[path] = type(error).__name__
        best[path] = min(best.get(path, float('inf')), time.perf_counter() - start)
        start = time.perf_counter()
        try:
            libcst.parse_module(text).code
        except Exception:
            floor[path] = None
            continue
        floor[path] = min(floor.get(path) or float('inf'), time.perf_counter() - start)
print(json.dumps([[str(path), text.count('\\n') + 1, best[path], status[path], floor[path]] for path, text in texts]))
"""


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


codemod = _load("bench_codemod", HERE / "bench_codemod.py")


def cache_root() -> Path:
    oracle = _load("tfmigrate_oracle_env", ROOT / "migrate" / "oracle_env.py")
    return oracle.cache_dir() / "real-code"


def unpacked(source: str, cache: Path, git_dirs: dict[str, Path]) -> Path:
    """`source`'s .py and .ipynb files under `cache/<name>/` (downloaded on first use)."""
    root = cache / _dir_name(source)
    if (root / _MARKER).exists():
        return root
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    if source.startswith("github:"):
        _unpack_repository(source, root, git_dirs)
    else:
        _unpack_wheel(source, root)
    (root / _MARKER).write_text(source)
    return root


def _dir_name(source: str) -> str:
    if source.startswith("github:"):
        repo, commit, _ = _repository(source)
        return f"{repo.replace('/', '-')}-{commit[:10]}"
    return source.replace("==", "-")


def _repository(source: str) -> tuple[str, str, list[str]]:
    """`github:owner/name@commit:a,b` -> ("owner/name", commit, ["a", "b"])."""
    spec = source[len("github:"):]
    repo, _, rest = spec.partition("@")
    commit, _, dirs = rest.partition(":")
    return repo, commit, [d for d in dirs.split(",") if d]


def _wanted(path: str, dirs: list[str]) -> bool:
    return path.endswith(_KEPT) and (not dirs or any(path == d or path.startswith(d.rstrip("/") + "/") for d in dirs))


def _unpack_wheel(requirement: str, root: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="tfmigrate-wheel-") as download:
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--no-deps",
                        "--only-binary=:all:", "--dest", download, requirement], check=True)
        (wheel,) = Path(download).glob("*.whl")
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(root, [m for m in archive.namelist() if m.endswith(".py") and ".dist-info/" not in m])


def _unpack_repository(source: str, root: Path, git_dirs: dict[str, Path]) -> None:
    """The pinned commit's files from a local clone (`--git-dir`), else GitHub's tarball of it."""
    repo, commit, dirs = _repository(source)
    if repo in git_dirs:
        git = ["git", "-C", str(git_dirs[repo])]
        listing = subprocess.run([*git, "ls-tree", "-r", "-z", commit], capture_output=True, check=True).stdout
        for entry in filter(None, listing.split(b"\0")):
            meta, _, name = entry.partition(b"\t")
            path = name.decode("utf-8", "replace")
            if meta.split()[1] != b"blob" or not _wanted(path, dirs):
                continue
            blob = subprocess.run([*git, "cat-file", "blob", meta.split()[2].decode()], capture_output=True)
            if blob.returncode == 0:  # (a partial clone may lack a blob: that file is left out)
                (root / path).parent.mkdir(parents=True, exist_ok=True)
                (root / path).write_bytes(blob.stdout)
        return
    url = f"https://codeload.github.com/{repo}/tar.gz/{commit}"
    with urllib.request.urlopen(url, timeout=300) as response, tarfile.open(fileobj=response, mode="r|gz") as archive:
        for member in archive:
            path = member.name.partition("/")[2]  # (the tarball's top folder is `name-commit/`)
            if member.isfile() and _wanted(path, dirs) and ".." not in Path(path).parts:
                (root / path).parent.mkdir(parents=True, exist_ok=True)
                (root / path).write_bytes(archive.extractfile(member).read())  # type: ignore[union-attr]


def _lines(paths: list[Path]) -> int:
    return sum(p.read_text(encoding="utf-8", errors="replace").count("\n") + 1 for p in paths)


def per_file(tree: Path, env: dict[str, str], repeats: int) -> list[tuple[str, int, float, str, float | None]]:
    proc = subprocess.run([sys.executable, "-c", _PER_FILE, str(tree), str(repeats)], capture_output=True, text=True, env=env, check=True)
    return [tuple(row) for row in json.loads(proc.stdout.splitlines()[-1])]


_SPIN = "import sys\nfor _ in range(int(sys.argv[1])):\n    total = sum(i * i % 7 for i in range(3_000_000))\n"


def cpu_ceiling(jobs: int, repeats: int) -> tuple[float, list[float]]:
    """How much faster `jobs` processes of pure Python finish `jobs` units of work than one process
    doing them all, best of `repeats` alternating pairs (each pair's ratio listed): what `-j N`
    can reach on this machine at best (a VM's vCPUs may share cores, or be throttled)."""
    ratios = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", _SPIN, str(jobs)], check=True)
        one = time.perf_counter() - start
        start = time.perf_counter()
        procs = [subprocess.Popen([sys.executable, "-c", _SPIN, "1"]) for _ in range(jobs)]
        for proc in procs:
            proc.wait()
        ratios.append(one / (time.perf_counter() - start))
    return max(ratios), ratios


def notebook_twins(notebooks: Path, twins: Path) -> None:
    """Each notebook's code as one `.py` file: its code cells masked and joined as `tfmigrate`
    joins them (`tfmigrate.notebook.code_as_module`)."""
    from tfmigrate.notebook import code_as_module  # (the bench runs from a checkout with tfmigrate installed)

    for path in sorted(notebooks.rglob("*.ipynb")):
        code = code_as_module(path.read_text(encoding="utf-8", errors="replace"))
        if code is not None:
            twin = twins / path.relative_to(notebooks).with_suffix(".py")
            twin.parent.mkdir(parents=True, exist_ok=True)
            twin.write_text(code, encoding="utf-8")


def _copy_kind(sources: list[str], cache: Path, git_dirs: dict[str, Path], dest: Path, suffix: str) -> None:
    for source in sources:
        root = unpacked(source, cache, git_dirs)
        for path in root.rglob(f"*{suffix}"):
            target = dest / _dir_name(source) / path.relative_to(root)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)


def _alternating(commands: dict[str, object], env: dict[str, str], repeats: int,
                 outputs: dict[str, str] | None = None) -> dict[str, list[float]]:
    """Each command (a `make() -> (cmd, cleanup)`) `repeats` times, in turn: a slow phase of the
    machine falls on all alike. tfmigrate may exit 1 (a file failed) or 2; `tf_upgrade_v2`
    ("upgrade") must exit 0, or its time is not of the whole tree. `outputs`: each one's last."""
    runs: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(repeats):
        for name, make in commands.items():
            cmd, cleanup = make()  # type: ignore[operator]
            elapsed, output = codemod._timed(cmd, env, (0,) if name == "upgrade" else (0, 1, 2))
            runs[name].append(elapsed)
            if outputs is not None:
                outputs[name] = output
            cleanup()
    return runs


_SKIPPED = re.compile(r"^tf_upgrade_v2_isolated: (\d+) files, (\d+) skipped$", re.M)


def _tfmigrate(tree: Path, jobs: int, out: Path, sha1: dict[str, str] | None = None):
    def make():
        shutil.rmtree(out, ignore_errors=True)
        cmd = [sys.executable, "-c", codemod._RUN_CLI, "-q", "-j", str(jobs), "--out-dir", str(out), str(tree)]

        def cleanup():
            if sha1 is not None and out.exists():
                for path in sorted(out.rglob("*")):
                    if path.is_file():
                        sha1[str(path.relative_to(out))] = hashlib.sha1(path.read_bytes()).hexdigest()
            shutil.rmtree(out, ignore_errors=True)
        return cmd, cleanup
    return make


def _upgrade(script: Path, tree: Path, scratch: Path):
    out = scratch / "out-tf_upgrade_v2"

    def make():
        shutil.rmtree(out, ignore_errors=True)
        cmd = codemod.tf_upgrade_v2_cmd(script, tree, out, scratch / "report.txt")
        return cmd, lambda: shutil.rmtree(out, ignore_errors=True)
    return make


# bench_codemod's floor, over the files LibCST parses (public trees hold Python 2 files, which the
# codemod reports as errors without migrating them)
_FLOOR = """
import sys, time, pathlib, libcst
texts = [p.read_text(encoding='utf-8', errors='replace') for p in sorted(pathlib.Path(sys.argv[1]).rglob('*.py'))]
start = time.perf_counter()
for text in texts:
    try:
        libcst.parse_module(text).code
    except Exception:
        pass
print(time.perf_counter() - start)
"""


def _floor(tree: Path, env: dict[str, str], repeats: int) -> float:
    return min(float(codemod._timed([sys.executable, "-c", _FLOOR, str(tree)], env)[1].split()[-1]) for _ in range(repeats))


def kind_rows(trees: dict[str, Path], scratch: Path, env: dict[str, str], repeats: int, script: Path | None,
              sha1: dict[str, str]) -> None:
    print(f"{'kind':<12} {'files':>6} {'lines':>9}  {'tfmigrate -j 1':>15} {'tf_upgrade_v2':>14} {'ratio':>6}  "
          f"{'libcst floor':>12} {'x floor':>7}")
    for kind, tree in trees.items():
        if kind == "notebooks":
            continue
        files = sorted(tree.rglob("*.py"))
        lines = _lines(files)
        commands = {"tfmigrate": _tfmigrate(tree, 1, scratch / "out-1", sha1)}
        if script is not None:
            commands["upgrade"] = _upgrade(script, tree, scratch)
        outputs: dict[str, str] = {}
        runs = _alternating(commands, env, repeats, outputs)
        ours = min(runs["tfmigrate"])
        theirs = min(runs["upgrade"]) if "upgrade" in runs else None
        floor = _floor(tree, env, repeats)
        print(f"{kind:<12} {len(files):>6} {lines:>9,}  {ours:>13.2f} s "
              + (f"{theirs:>12.2f} s {theirs / ours:>5.2f}x" if theirs else f"{'skipped':>14} {'-':>6}")
              + f"  {floor:>10.2f} s {ours / floor:>6.2f}x   [tfmigrate {', '.join(f'{r:.2f}' for r in runs['tfmigrate'])}"
              + (f"; tf_upgrade_v2 {', '.join(f'{r:.2f}' for r in runs['upgrade'])}" if theirs else "") + "]")
        skipped = _SKIPPED.findall(outputs.get("upgrade", ""))
        if skipped and skipped[-1][1] != "0":
            print(f"{'':<12} tf_upgrade_v2 skipped {skipped[-1][1]} of {skipped[-1][0]} files it cannot annotate "
                  "(it would have stopped there: tf_upgrade_v2_isolated.py)")


def notebook_row(notebooks: Path, scratch: Path, env: dict[str, str], repeats: int, sha1: dict[str, str]) -> None:
    twins = scratch / "notebook-twins"
    notebook_twins(notebooks, twins)
    count = len(list(notebooks.rglob("*.ipynb")))
    runs = _alternating({"notebooks": _tfmigrate(notebooks, 1, scratch / "out-nb", sha1),
                         "twins": _tfmigrate(twins, 1, scratch / "out-twins")}, env, repeats)
    ours, twin = min(runs["notebooks"]), min(runs["twins"])
    print(f"{'notebooks':<12} {count:>6} notebooks: {ours:.2f} s; their code as {len(list(twins.rglob('*.py')))} .py "
          f"files {twin:.2f} s: {100 * (ours / twin - 1):+.1f}%   [{', '.join(f'{a:.2f}/{b:.2f}' for a, b in zip(runs['notebooks'], runs['twins']))}]")


def whole_tree(tree: Path, scratch: Path, env: dict[str, str], repeats: int, jobs: int, estimator_root: str | None) -> None:
    files = sorted(tree.rglob("*.py"))
    lines = _lines(files)
    print(f"\nall .py files: {len(files)} files, {lines:,} lines")
    runs = _alternating({1: _tfmigrate(tree, 1, scratch / "out-1"), jobs: _tfmigrate(tree, jobs, scratch / "out-n")}, env, repeats)
    t1, tn = min(runs[1]), min(runs[jobs])
    pairs = [a / b for a, b in zip(runs[1], runs[jobs])]
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    codemod._row("tfmigrate -j 1", t1, lines, runs[1], f"peak RSS of any run {peak_mb:,.0f} MB")
    codemod._row(f"tfmigrate -j {jobs}", tn, lines, runs[jobs], f"scaling {t1 / tn:.2f}x (each pair {', '.join(f'{r:.2f}' for r in pairs)})")
    ceiling, ceiling_runs = cpu_ceiling(jobs, repeats)
    print(f"{'CPU ceiling':<28} {ceiling:7.2f}x  [{', '.join(f'{r:.2f}' for r in ceiling_runs)}]  "
          f"{jobs} processes of pure Python against one doing their work, alternating (the machine's own scaling)")

    rows = per_file(tree, env, repeats)
    rates = [n / t for _, n, t, _, _ in rows if t > 0]
    median = statistics.median(rates)
    print(f"\nper file, in one process, each file's best of {repeats}: median {median:,.0f} lines/s over "
          f"{len(rows)} files; the ten slowest:")
    for path, n, seconds, status, _ in sorted(rows, key=lambda r: -r[2])[:10]:
        note = "" if status == "ok" else f"  ({status})"
        print(f"  {seconds:6.2f} s {n:6,} lines {n / seconds:8,.0f} lines/s  {Path(path).relative_to(tree)}{note}")
    if estimator_root is None:
        return
    programs = [r for r in rows if Path(r[0]).relative_to(tree).parts[0] == estimator_root and r[4]]
    over = sorted(((t / f, Path(p).relative_to(tree), n) for p, n, t, _, f in programs), reverse=True)
    within = sum(1 for ratio, _, _ in over if ratio <= 3)
    print(f"\nestimator programs against LibCST's own parse+codegen of each file: {within} of {len(over)} files within 3x; "
          f"median {statistics.median(r for r, _, _ in over):.2f}x; the five furthest:")
    for ratio, path, n in over[:5]:
        print(f"  {ratio:5.2f}x {n:6,} lines  {path}")
    print("estimator programs' lines/s by file size (median of the files in each):")
    for low, high in ((1, 200), (200, 1000), (1000, 10**9)):
        sized = [n / t for _, n, t, _, _ in programs if low <= n < high and t > 0]
        if sized:
            print(f"  {low:>5,}-{'' if high == 10**9 else f'{high - 1:,}':<6} lines: {statistics.median(sized):8,.0f} lines/s ({len(sized)} files)")


# What pre-commit runs on each commit: `--check` of a small file, which the text passes migrate.
_SMALL_FILE = "import tensorflow as tf\nsess = tf.Session()\n"


def startup(scratch: Path, env: dict[str, str], repeats: int) -> None:
    """`tfmigrate --version` and `tfmigrate --check` of a two-line file, each in a fresh process,
    best of `repeats` (at least 5): the tool's start-up, which pre-commit pays on every commit."""
    small = scratch / "small.py"
    small.write_text(_SMALL_FILE)
    tool = [sys.executable, "-c", codemod._RUN_CLI]
    print("start-up (fresh process, best of runs; bar 0.3 s):")
    for label, args, ok in (("tfmigrate --version", ["--version"], (0,)), ("tfmigrate --check small.py", ["--check", str(small)], (1,))):
        runs = [codemod._timed(tool + args, env, ok)[0] for _ in range(max(5, repeats))]
        print(f"  {label:<28} {min(runs):5.2f} s   [{', '.join(f'{r:.2f}' for r in runs)}]")
    print()


def _compare(sha1: dict[str, str], against: Path) -> None:
    before = json.loads(against.read_text())
    moved = sorted(path for path in set(before) | set(sha1) if before.get(path) != sha1.get(path))
    print(f"\noutput against {against}: {len(sha1) - len([p for p in moved if p in sha1])} of {len(sha1)} files identical"
          + (f"; differing: {', '.join(moved[:10])}{' ...' if len(moved) > 10 else ''}" if moved else ""))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kinds", default=",".join(KINDS), help=f"comma-separated, of {', '.join(KINDS)} (default: all)")
    parser.add_argument("--git-dir", action="append", default=[], metavar="OWNER/NAME=PATH",
                        help="read that repository's pinned commit from a local clone (repeatable)")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1, help="N for the -j N run (default: CPUs)")
    parser.add_argument("--repeats", type=int, default=2, help="runs per measurement, best kept (default 2)")
    parser.add_argument("--no-oracle", action="store_true", help="skip tf_upgrade_v2")
    parser.add_argument("--sha1", type=Path, metavar="FILE", help="write the sha1 of each file `-j 1` wrote")
    parser.add_argument("--against", type=Path, metavar="FILE", help="compare the output with a --sha1 list")
    args = parser.parse_args(argv)
    kinds = [k for k in args.kinds.split(",") if k]
    if set(kinds) - set(KINDS):
        parser.error(f"unknown kinds: {sorted(set(kinds) - set(KINDS))}")
    git_dirs = dict(item.split("=", 1) for item in args.git_dir)
    git_dirs = {repo: Path(path) for repo, path in git_dirs.items()}
    jobs = max(2, args.jobs)
    cache = cache_root()
    cache.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="tfmigrate-bench-real-"))
    try:
        trees: dict[str, Path] = {}
        for kind in kinds:
            trees[kind] = scratch / kind
            sources = SOURCES["estimator" if kind == "notebooks" else kind]
            _copy_kind(list(sources), cache, git_dirs, trees[kind], ".ipynb" if kind == "notebooks" else ".py")
            print(f"{kind}: {', '.join(sources)}")
        env = codemod._env(None)
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs; best of {args.repeats}; ratios are tf_upgrade_v2's "
              "time over tfmigrate's (above 1: tfmigrate is faster), and tfmigrate's over LibCST's\n")
        startup(scratch, env, args.repeats)
        script = None if args.no_oracle else codemod.oracle_tf_upgrade_v2(build=False)
        sha1: dict[str, str] = {}
        kind_rows(trees, scratch, env, args.repeats, script, sha1)
        if "notebooks" in trees:
            notebook_row(trees["notebooks"], scratch, env, args.repeats, sha1)
        whole = scratch / "all"
        for kind, tree in trees.items():
            if kind != "notebooks":
                shutil.copytree(tree, whole / kind)
        if whole.exists():
            whole_tree(whole, scratch, env, args.repeats, jobs, "estimator" if "estimator" in trees else None)
        if args.sha1:
            args.sha1.write_text(json.dumps(sha1, indent=0, sort_keys=True))
        if args.against:
            _compare(sha1, args.against)
        return 0
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
