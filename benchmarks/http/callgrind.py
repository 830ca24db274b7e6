"""Counting a benchmark's requests in instructions under valgrind's callgrind, for count_move
and count_cold: a module runs itself again under valgrind, with collection on only inside the
C functions it calls its measured requests from (`toggles`), and reads back each one's
inclusive count."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path


def installed() -> bool:
    """Whether valgrind and callgrind_annotate are there (Debian's valgrind package)."""
    return shutil.which("valgrind") is not None and shutil.which("callgrind_annotate") is not None


def run_counted(module: str, argv: Sequence[str], inner: str, toggles: Sequence[str], *,
                instrument_from_start: bool = True, keep: Path | None = None) -> tuple[str, int]:
    """Runs `python -m module *argv` under callgrind, collecting inside the `toggles` only, with
    the environment variable `inner` naming the file where the run writes how many requests of
    each kind it measured. Returns callgrind_annotate's inclusive listing and that number.
    `instrument_from_start=False` leaves the run uninstrumented until it switches callgrind on
    itself (callgrind_control --instr=on): a long set-up then runs at nearly full speed."""
    workdir = Path(tempfile.mkdtemp(prefix="aos-count-"))
    try:
        out, counts = workdir / "callgrind.out", workdir / "count"
        subprocess.run(
            ["valgrind", "--tool=callgrind",
             *([] if instrument_from_start else ["--instr-atstart=no"]), "--collect-atstart=no",
             *(f"--toggle-collect={name}" for name in toggles), f"--callgrind-out-file={out}",
             sys.executable, "-m", module, *argv],
            env={**os.environ, inner: str(counts)}, check=True,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        annotated = subprocess.run(["callgrind_annotate", "--inclusive=yes", str(out)],
                                   capture_output=True, text=True, check=True).stdout
        if keep is not None:
            shutil.copyfile(out, keep)
        return annotated, int(counts.read_text())
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def inclusive(annotated: str, function: str) -> int:
    """The inclusive instruction count of `function` in callgrind_annotate's listing."""
    for line in annotated.splitlines():
        if re.search(rf":{function} \[", line):
            return int(line.split()[0].replace(",", ""))
    raise RuntimeError(f"callgrind counted nothing in {function}")
