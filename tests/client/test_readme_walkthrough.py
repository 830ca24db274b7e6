"""The README's curl walk-through is true: its shell blocks ("For frontend developers", then the
webhook example of "Asynchronous play", with the small receiver it shows) run as one script
against a live service started as the README says (`python -m service`, as `./run.sh` does, with
`AOS_WEBHOOKS_ALLOW_PRIVATE=1`), and print exactly the lines the README shows: every whole-line
`# …` comment of those blocks is an output line, in order."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from client_test_servers import free_port

ROOT = Path(__file__).resolve().parents[2]
README_API = "API=http://127.0.0.1:8000"
README_RECEIVER_PORT = "8900"  # the receiver's, in its code and in the webhook's URL


def walkthrough() -> list[str]:
    """The shell blocks of the walk-through and of the webhook example, in order."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    frontend, webhooks = section(text, "## For frontend developers"), section(text, "## Asynchronous play")
    return re.findall(r"```sh\n(.*?)```", frontend + webhooks, re.S)


def section(text: str, heading: str) -> str:
    """A README section, from its heading to the next of its level."""
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start : end if end >= 0 else len(text)]


@pytest.fixture(scope="module")
def service() -> Iterator[str]:
    port = free_port()
    env = {**os.environ, "AOS_WEBHOOKS_ALLOW_PRIVATE": "1", "AOS_METRICS_PORT": "off",
           "AOS_WARM_UP_GAMES": "0"}
    env.pop("REDIS_URL", None)
    env.pop("DATABASE_URL", None)
    process = subprocess.Popen([sys.executable, "-m", "service", "--port", str(port)], cwd=ROOT, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if requests.get(f"{url}/v1/health", timeout=2).ok:
                    break
            except requests.ConnectionError:
                pass
            assert process.poll() is None, "the service did not start"
            assert time.monotonic() < deadline, "the service did not answer in 120 s"
            time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        process.wait(30)


def test_the_walkthrough_prints_what_the_readme_shows(service: str, tmp_path: Path) -> None:
    missing = [name for name in ("bash", "curl", "jq", "python3") if not shutil.which(name)]
    assert not missing, f"the walk-through needs {missing} (./test.sh installs them)"
    blocks = walkthrough()
    assert README_API in blocks[0] and any(README_RECEIVER_PORT in block for block in blocks)
    receiver = str(free_port())
    script = "set -euo pipefail\n" + "\n".join(blocks)
    script = script.replace(README_API, f"API={service}").replace(README_RECEIVER_PORT, receiver)
    shown = [line[2:] for block in blocks for line in block.splitlines() if line.startswith("# ")]
    shown = [line.replace(README_RECEIVER_PORT, receiver) for line in shown]
    assert len(shown) >= 12, shown  # the walk-through shows what each step prints
    # Its own process group: a receiver that never hears (a delivery lost) is ended with it.
    walk = subprocess.Popen(["bash", "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=tmp_path, start_new_session=True)
    try:
        out, err = walk.communicate(timeout=120)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(walk.pid, signal.SIGKILL)
    assert walk.returncode == 0, err
    assert out.splitlines() == shown, out
