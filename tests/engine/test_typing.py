"""The code's types hold: mypy over service/ (the settings in pyproject.toml's [tool.mypy]) finds
no error. The engine's state is typed key by key (service/engine/layout.py), so a misspelt key or
a phase record read outside its phase is an error here, not a KeyError in a game."""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# mypy's incremental cache, kept in the temp dir (as the tests' bytecode is, tests/conftest.py) so
# that a fresh clone's run finds it warm: a cold check of service/ is ~10 CPU-s, a warm one from
# another checkout ~2 s, from this one ~0.2 s. mypy checks each cached module against its source
# (size, mtime, hash) and its options, so an error is found as without it; the files store (not
# sqlite) writes each entry by an atomic rename, so two checkouts' runs may share it.
CACHE = Path(tempfile.gettempdir()) / "aos-rules-mypy" / "service"


def mypy(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(CACHE), "--no-sqlite-cache",
                           *args], cwd=ROOT, capture_output=True, text=True)


def test_mypy_finds_no_error_in_service_and_checks_every_file():
    result = mypy()
    assert result.returncode == 0, result.stdout + result.stderr
    # "Success: no issues found in N source files": N is every module of service/, so a
    # narrowed `files` setting cannot pass over unchecked code.
    match = re.match(r"Success: no issues found in (\d+) source files", result.stdout)
    assert match, result.stdout
    assert int(match.group(1)) == len(list((ROOT / "service").rglob("*.py")))


def test_a_misread_state_key_is_a_type_error(tmp_path: Path):
    probe = tmp_path / "probe.py"
    probe.write_text("from service.engine.layout import State\n\n\n"
                     "def f(state: State) -> int:\n"
                     "    return state['rounds']\n")
    result = mypy(str(probe))
    assert result.returncode == 1, result.stdout
    assert 'TypedDict "State" has no key "rounds"' in result.stdout, result.stdout


def test_the_contract_types_are_the_contract_s_own():
    # service/engine/contract_types.py is generated from openapi.yaml: an edit of either alone
    # fails here.
    result = subprocess.run([sys.executable, "tools/generate_types.py", "--check"], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_an_event_the_contract_does_not_describe_is_a_type_error(tmp_path: Path):
    # Every event the engine makes is checked against openapi.yaml's schema of its type.
    probe = tmp_path / "probe.py"
    probe.write_text("from service.engine.layout import Event\n\n\n"
                     "def f(events: list[Event]) -> None:\n"
                     "    events.append({'type': 'bid', 'seat': 0, 'amount': 3})\n"
                     "    events.append({'type': 'bid', 'seat': 0, 'amount': '3'})\n"
                     "    events.append({'type': 'bid', 'seat': 0, 'bid': 3})\n")
    result = mypy(str(probe))
    assert result.returncode == 1, result.stdout
    errors = [line for line in result.stdout.splitlines() if ": error:" in line]
    assert [line.split(":")[1] for line in errors if "probe.py" in line] == ["6", "7"], result.stdout


def test_a_listed_move_the_contract_does_not_describe_is_a_type_error(tmp_path: Path):
    # What a phase lists is layout.Move, the union of openapi.yaml's move schemas.
    probe = tmp_path / "probe.py"
    probe.write_text("from service.engine.layout import Move\n\n\n"
                     "def legal() -> list[Move]:\n"
                     "    return [{'type': 'bid', 'amount': 3},\n"
                     "            {'type': 'bid', 'count': 3},\n"
                     "            {'type': 'deliver', 'from': {'q': 1, 'r': 2}, 'color': 'red'}]\n")
    result = mypy(str(probe))
    assert result.returncode == 1, result.stdout
    lines = {line.split(":")[1] for line in result.stdout.splitlines()
             if "probe.py" in line and ": error:" in line}
    assert lines == {"6", "7"}, result.stdout
