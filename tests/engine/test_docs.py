"""The documents made from the engine's own tables stay in step with it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_error_codes_page_lists_every_rule_code():
    result = subprocess.run([sys.executable, "tools/error_codes_doc.py", "--check"], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout


def test_every_rule_code_is_checked_by_some_test():
    from service.engine.errors import CODES

    tests = "\n".join(p.read_text() for p in (ROOT / "tests").rglob("*.py"))
    untested = [code for code in CODES if f'"{code}"' not in tests]
    assert untested == []
