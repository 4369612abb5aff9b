"""Published TF1 programs, fetched from PyPI at test time and kept in the tfmigrate cache.

`package_dir("bert")` returns the unpacked `bert/` package of `bert-tensorflow==1.0.4` (its
sources only: the wheel is downloaded with `pip download --no-deps` and unzipped, nothing is
installed), under `$TFMIGRATE_CACHE/real-programs/<wheel stem>/`. The first caller downloads and
unpacks it; later callers (and later sessions) reuse it. A lock keeps parallel test processes from
fetching the same wheel twice, and a marker file written last makes a half-unpacked tree (an
interrupted run) count as absent.

No source of these programs is kept in this repository: the tests run what PyPI serves.
"""

from __future__ import annotations

import fcntl
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from equivalence.oracle import cache_dir


@dataclass(frozen=True)
class Package:
    name: str  # the import name (the top-level directory in the wheel)
    requirement: str  # what `pip download` is asked for

    @property
    def stem(self) -> str:
        return self.requirement.replace("==", "-")


PACKAGES = {
    "bert": Package("bert", "bert-tensorflow==1.0.4"),
    "albert": Package("albert", "albert-tensorflow==1.1"),
    "tensor2tensor": Package("tensor2tensor", "tensor2tensor==1.15.7"),
}
_MARKER = ".tfmigrate-unpacked"


def real_programs_cache() -> Path:
    return cache_dir() / "real-programs"


def package_dir(name: str) -> Path:
    """The unpacked package directory of `PACKAGES[name]` (downloading it on first use)."""
    package = PACKAGES[name]
    root = real_programs_cache() / package.stem
    real_programs_cache().mkdir(parents=True, exist_ok=True)
    with open(real_programs_cache() / f"{package.stem}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        marker = root / _MARKER
        if marker.exists() and marker.read_text() == package.requirement and (root / package.name).is_dir():
            return root / package.name
        if root.exists():
            shutil.rmtree(root)
        with tempfile.TemporaryDirectory(prefix="tfmigrate-wheel-") as download:
            subprocess.run(
                [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
                 "--no-deps", "--only-binary=:all:", "--dest", download, package.requirement],
                check=True,
            )
            wheels = sorted(Path(download).glob("*.whl"))
            if len(wheels) != 1:
                raise RuntimeError(f"pip download {package.requirement} gave {[w.name for w in wheels]}, not one wheel")
            staging = root.with_name(root.name + ".partial")
            shutil.rmtree(staging, ignore_errors=True)
            with zipfile.ZipFile(wheels[0]) as wheel:
                members = [m for m in wheel.namelist() if m.startswith(f"{package.name}/")]
                if not members:
                    raise RuntimeError(f"{wheels[0].name} has no {package.name}/ package")
                wheel.extractall(staging, members)
            staging.rename(root)
        marker.write_text(package.requirement)
    return root / package.name
