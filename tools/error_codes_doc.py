"""Writes docs/error-codes.md from the engine's table of rule codes (service/engine/errors.py).

    python tools/error_codes_doc.py          # rewrite the page
    python tools/error_codes_doc.py --check  # exit 1 when the page is out of date
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from service.engine.errors import CODES  # noqa: E402

PAGE = ROOT / "docs" / "error-codes.md"


def render() -> str:
    lines = [
        "# Rule codes of illegal moves",
        "",
        "`POST /v1/games/{id}/moves` answers an illegal move with `422` and a problem+json body whose",
        "`code` is one of these; `moves/validate` gives the same code with `legal: false`. The codes are",
        "stable: new ones may be added, none is renamed. This page is generated from",
        "`service/engine/errors.py` by `tools/error_codes_doc.py`.",
        "",
        "| code | the rule it names |",
        "|---|---|",
    ]
    lines += [f"| `{code}` | {meaning} |" for code, meaning in CODES.items()]
    return "\n".join(lines) + "\n"


def main() -> int:
    text = render()
    if "--check" in sys.argv:
        if not PAGE.exists() or PAGE.read_text() != text:
            print(f"{PAGE.relative_to(ROOT)} is out of date: run python tools/error_codes_doc.py")
            return 1
        return 0
    PAGE.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
