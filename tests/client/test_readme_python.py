"""The READMEs' Python examples are true: each README's examples, read in order as one session,
pass `mypy --strict` against this tree's client, and run against a live service; the client
package itself passes `mypy --strict` (its own users' type checker sees no hole in it)."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
READMES = ["README.md", "client/README.md"]


def programs(readme: str) -> list[str]:
    """The README's ```python blocks as the programs a reader runs: a block that makes its own
    starting point (a client, `AosClient(...)`, or an engine game, `new_game(...)`) starts one; a
    block without goes on from the one before (it uses its names)."""
    text = (ROOT / readme).read_text(encoding="utf-8")
    found: list[str] = []
    for block in re.findall(r"```python\n(.*?)```", text, re.S):
        if re.search(r"= AosClient\(|\bnew_game\(", block) or not found:
            found.append(block)
        else:
            found[-1] += "\n" + block
    assert found, readme
    return found


def mypy_strict(test: str, *targets: str) -> subprocess.CompletedProcess[str]:
    # This tree's client first (MYPYPATH is searched before the installed packages). Each test its
    # own cache (they may run at the same time, and other options would make mypy check the
    # modules again), kept in the temp dir as test_typing.py's is (see there): a cold check of the
    # client ~2.6 CPU-s a test.
    env = {**os.environ, "MYPYPATH": str(ROOT / "client")}
    cache = Path(tempfile.gettempdir()) / "aos-rules-mypy" / test
    return subprocess.run([sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(cache),
                           "--no-sqlite-cache", *targets],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)


def test_the_readmes_python_examples_pass_mypy_strict(tmp_path: Path) -> None:
    files = []
    for readme in READMES:
        for i, program in enumerate(programs(readme)):
            path = tmp_path / f"{readme.replace('/', '_').replace('.md', '')}_{i}.py"
            path.write_text(program, encoding="utf-8")
            files.append(str(path))
    assert len(files) == 3  # the engine; the bot's game and what follows; the client README's
    # And each README's blocks all in one file, as a reader pasting them one after another has.
    for readme in READMES:
        path = tmp_path / f"{readme.replace('/', '_').replace('.md', '')}_whole.py"
        path.write_text("\n".join(programs(readme)), encoding="utf-8")
        files.append(str(path))
    # Errors in what the examples import (service/ is checked by its own settings, the client
    # below) are not the examples'; their types still are.
    result = mypy_strict("readmes", "--follow-imports=silent", *files)
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.match(rf"Success: no issues found in {len(files)} source files", result.stdout), result.stdout


def test_the_client_package_passes_mypy_strict() -> None:
    result = mypy_strict("client", "--python-version", "3.10", "-p", "aos_client")  # 3.10 up
    assert result.returncode == 0, result.stdout + result.stderr
    source = (ROOT / "client/aos_client/bot.py").read_text(encoding="utf-8")
    assert "type: ignore" not in source  # the shipped bot needs no escape hatch


@pytest.mark.parametrize("readme", READMES)
def test_the_readmes_python_examples_run(live_url: str, capsys: pytest.CaptureFixture[str],
                                         readme: str) -> None:
    for program in programs(readme):
        code = program.replace("http://127.0.0.1:8000", live_url)
        exec(compile(code, readme, "exec"), {"__name__": "readme"})  # noqa: S102
    out = capsys.readouterr().out
    # The greedy game's scores: a real game, greedy seats last the rounds and score (a score may
    # be negative: 3 x income less 3 x shares), not all bankrupt in round 1.
    scores = next(line for line in out.splitlines() if line.startswith("[(0, "))
    printed = ast.literal_eval(scores)
    assert [seat for seat, _, _ in printed] == [0, 1, 2], printed
    assert sum(points is not None for _, points, _ in printed) >= 2, printed
    # The events stream replays the whole game: the first event is version 1, the last the end.
    versions = [int(line.split()[0]) for line in out.splitlines() if re.match(r"\d+ \S+", line)]
    assert versions[0] == 1 and versions == list(range(1, len(versions) + 1)), out[:2000]
    if readme == "client/README.md":
        assert re.search(r"^(INSUFFICIENT_CASH|GAME_FINISHED|\w+) ", out.splitlines()[-1]), out[-500:]


def test_only_a_conditional_read_may_be_none(tmp_path: Path) -> None:
    """`get_game(id)` is a GameView; with `if_none_match` it may be None (a 304), and a caller that
    forgets it is told so by the type checker. The same for the map, the map list and the board."""
    (tmp_path / "reads.py").write_text(
        "from aos_client import AosClient, CreatedGame, GameView, MapDetail, MapSummary\n"
        "api = AosClient('http://127.0.0.1:8000')\n"
        "view: GameView = api.get_game('g')\n"
        "detail: MapDetail = api.get_map('rust_belt')\n"
        "maps: list[MapSummary] = api.list_maps()\n"
        "svg: str = api.get_board_svg('g')\n"
        "maybe: GameView | None = api.get_game('g', if_none_match=3)\n"
        "created: CreatedGame = api.create_game({'map': 'rust_belt', 'players': []})\n"
        "view = created.game\n"
        "view = api.get_game('g')\n"
    )
    ok = mypy_strict("reads", "--follow-imports=silent", str(tmp_path / "reads.py"))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    (tmp_path / "forgets.py").write_text(
        "from aos_client import AosClient, GameView\n"
        "api = AosClient('http://127.0.0.1:8000')\n"
        "view: GameView = api.get_game('g', if_none_match=3)\n"
        "svg: str = api.get_board_svg('g', if_none_match=3)\n"
    )
    told = mypy_strict("reads", "--follow-imports=silent", str(tmp_path / "forgets.py"))
    assert told.returncode == 1 and told.stdout.count("[assignment]") == 2, told.stdout
