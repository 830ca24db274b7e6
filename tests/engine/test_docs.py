"""The documents made from the engine's own tables stay in step with it."""

from __future__ import annotations

import re
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


OUTSIDE_DOCUMENTS = ("RULES.md", "RULES-DIGEST", "DESIGN.md", "CONTRACT.md", "RECONSTRUCTED.md",
                     "seeds/", "../shared", "digest §")


def test_tests_cite_the_projects_own_documents():
    """A rule test names the project's record of the rule (docs/rules-decisions.md), which ships
    with the code, not a document outside the repository."""
    here = Path(__file__).resolve()
    cited = {p.relative_to(ROOT): p.read_text() for p in (ROOT / "tests").rglob("*.py") if p != here}
    outside = sorted(f"{path}: {name}" for path, text in cited.items()
                     for name in OUTSIDE_DOCUMENTS if name in text)
    assert outside == []
    decisions = (ROOT / "docs" / "rules-decisions.md").read_text()
    numbers = set(re.findall(r"^\| (\d+) \|", decisions, re.M))
    for path, text in cited.items():
        for match in re.finditer(r"docs/rules-decisions\.md base ([\d ,and-]+)", text):
            for n in re.findall(r"\d+", match.group(1)):
                assert n in numbers, f"{path} cites base decision {n}, which docs/rules-decisions.md lacks"
