"""Writes docs/error-codes.md: every `code` the service answers with, its status and its fields.

    python tools/error_codes_doc.py          # rewrite the page
    python tools/error_codes_doc.py --check  # exit 1 when the page is out of date

The page is made from the tables: the service's codes (service/api/error_codes.py: the one
table of their statuses; the core raises them as GameError codes), the engine's
rule codes and the fields each carries (service/engine/errors.py: CODES, CODE_FIELDS,
SOMETIMES_FIELDS). `raised_codes()` reads the source's raise sites; the tests hold the tables to
them (every code raised is listed, and every raise of a rule code carries its fields).
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from service.api.error_codes import API_CODES, RULE_FIELDS, RULE_STATUS  # noqa: E402
from service.engine.errors import CODE_FIELDS, CODES, SOMETIMES_FIELDS  # noqa: E402

PAGE = ROOT / "docs" / "error-codes.md"
SOURCES = ("service/api", "service/referee", "service/engine", "service/store")
# Modules outside those that answer requests before the app sees them: the admission layer
# (service/admission.py) and the server's own answers (service/serving.py).
FRONT_SOURCES = ("service/admission.py", "service/serving.py")
# The calls that name a code: ApiError(status, code, ...) and problem(status, code, ...) in the API,
# GameError(code, ...) in the core (its status is its row's in the table),
# IllegalMove(code, ...) and SetupError(code, ...) in the engine, and the build geometry's
# Refusal(code, ...), which build_shapes.judge_* raise as the IllegalMove of the hex judged: with
# `hex` added where the code's fields name it. In front of the app: the admission's
# refusal(status, code, ...) and _refuse(environ, start_response, status, code, ...), the server's
# problem_response(status, reason, code, ...), and the rows of its GUNICORN_ERRORS table
# (exception, status, reason, code). Each is (index of the status or None, index of the code).
API_CALLS = {"ApiError": (0, 1), "problem": (0, 1), "GameError": (None, 0),
             "refusal": (0, 1), "_refuse": (2, 3), "problem_response": (0, 2)}
API_TABLES = {"GUNICORN_ERRORS": (1, 3)}
ENGINE_CALLS = {"IllegalMove": 0, "SetupError": 0, "Refusal": 0}
NOT_FIELDS = {"headers"}


@dataclass(frozen=True)
class Raised:
    code: str
    kind: str  # "api", "rule" (IllegalMove) or "setup" (SetupError)
    status: int | None  # the literal status of an API call, if it has one
    fields: frozenset[str]
    where: str  # path:line


def _call_name(node: ast.Call) -> str | None:
    if isinstance(node.func, ast.Name):
        return node.func.id
    if isinstance(node.func, ast.Attribute):
        return node.func.attr
    return None


def _strings(node: ast.AST, module_dicts: dict[str, list[str]]) -> list[str]:
    """The string constants an expression can evaluate to, looking into module-level dicts."""
    found = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            found.append(sub.value)
        elif isinstance(sub, ast.Name) and sub.id in module_dicts:
            found += module_dicts[sub.id]
    return found


def _codes_of(expr: ast.AST, scope: ast.AST, module_dicts: dict[str, list[str]]) -> list[str] | None:
    """The codes a call's code argument can be; None when it passes on another error's code."""
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return [expr.value]
    if isinstance(expr, ast.Name):
        values = []
        for node in ast.walk(scope):
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == expr.id for t in node.targets
            ):
                values += _strings(node.value, module_dicts)
        return [v for v in values if v.isupper()] or None
    return None  # e.g. exc.code: the engine's code, passed on


def _scan(path: Path) -> list[Raised]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    module_dicts = {
        t.id: [v.value for v in node.value.values if isinstance(v, ast.Constant)]
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict)
        for t in node.targets
        if isinstance(t, ast.Name)
    }
    where = path.relative_to(ROOT).as_posix()
    found: list[Raised] = []
    scopes = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    for scope in [tree, *scopes]:
        for node in ast.walk(scope):
            if not isinstance(node, ast.Call):
                continue
            name = _call_name(node)
            fields = frozenset(k.arg for k in node.keywords if k.arg is not None) - NOT_FIELDS
            if name in API_CALLS and len(node.args) > API_CALLS[name][1]:
                at_status, at_code = API_CALLS[name]
                found += _api_raise(node.args, at_status, at_code, scope, module_dicts, fields,
                                    f"{where}:{node.lineno}")
            elif name in ENGINE_CALLS and node.args:
                kind = "setup" if name == "SetupError" else "rule"
                codes = _codes_of(node.args[0], scope, module_dicts) or []
                found += [Raised(c, kind, None, _as_raised(name, c, fields), f"{where}:{node.lineno}")
                          for c in codes]
    for node in tree.body:
        if (isinstance(node, ast.Assign | ast.AnnAssign) and isinstance(node.value, ast.Tuple)
                and isinstance(target := getattr(node, "target", None) or node.targets[0], ast.Name)
                and target.id in API_TABLES):
            at_status, at_code = API_TABLES[target.id]
            for row in node.value.elts:
                if isinstance(row, ast.Tuple):
                    found += _api_raise(row.elts, at_status, at_code, tree, module_dicts,
                                        frozenset(), f"{where}:{row.lineno}")
    # A call is met once per enclosing scope: keep one of each.
    return sorted(set(found), key=lambda r: (r.where, r.code))


def _api_raise(args: list[ast.expr], at_status: int | None, at_code: int, scope: ast.AST,
               module_dicts: dict[str, list[str]], fields: frozenset[str], where: str) -> list[Raised]:
    literal = at_status is not None and isinstance(args[at_status], ast.Constant)
    status = args[at_status].value if literal else None  # type: ignore[index, attr-defined]
    codes = _codes_of(args[at_code], scope, module_dicts) or []
    return [Raised(c, "api", status, fields, where) for c in codes]


def _as_raised(call: str, code: str, fields: frozenset[str]) -> frozenset[str]:
    """The fields a raise carries once it reaches the caller: a Refusal gains the hex judged."""
    if call == "Refusal" and "hex" in CODE_FIELDS.get(code, ()):
        return fields | {"hex"}
    return fields


def raised_codes() -> list[Raised]:
    """Every code the service's source can answer with, and where."""
    found: list[Raised] = []
    for source in SOURCES:
        for path in sorted((ROOT / source).rglob("*.py")):
            found += _scan(path)
    for module in FRONT_SOURCES:
        found += _scan(ROOT / module)
    return found


def rule_fields() -> dict[str, set[str]]:
    fields: dict[str, set[str]] = {code: set() for code in CODES}
    for raised in raised_codes():
        if raised.kind == "rule":
            fields.setdefault(raised.code, set()).update(raised.fields)
    return fields


def _fields(names: dict[str, str] | set[str]) -> str:
    return ", ".join(f"`{name}`" for name in sorted(names)) or "–"


def _rule_fields(code: str) -> str:
    """The fields of a rule code as the engine's table gives them: always, then sometimes."""
    always = [f"`{name}`" for name in CODE_FIELDS.get(code, ())]
    sometimes = [f"`{name}` (when {when})" for name, when in SOMETIMES_FIELDS.get(code, {}).items()]
    return ", ".join(always + sometimes) or "–"


def render() -> str:
    lines = [
        "# Error codes",
        "",
        "Every error is `application/problem+json` (RFC 9457): `type` (`urn:aos:problem:<code>`),",
        "`title`, `status`, `detail` (English, for people: it may change) and `code`, stable: branch on",
        "it. New codes may be added; none is renamed. Some codes carry more fields, listed here. This",
        "page is generated by `tools/error_codes_doc.py` from `service/api/error_codes.py` and",
        "`service/engine/errors.py`; tests check that it lists every code the source can answer with",
        "and nothing else, and that every raise of a rule code carries the fields listed for it.",
        "",
        "## Requests, tokens, games",
        "",
        "| code | status | when | fields | headers |",
        "|---|---|---|---|---|",
    ]
    for code, info in API_CODES.items():
        status = "4xx/5xx" if code == "HTTP_ERROR" else str(info.status)
        headers = ", ".join(f"`{h}`" for h in info.headers) or "–"
        lines.append(f"| `{code}` | {status} | {info.meaning} | {_fields(info.fields)} | {headers} |")
    api_fields = {name: meaning for c in API_CODES.values() for name, meaning in c.fields.items()}
    lines += [
        "",
        "Fields: " + "; ".join(f"`{name}`: {meaning}" for name, meaning in sorted(api_fields.items())) + ".",
        "",
        "### Preconditions: `If-Match` and `If-None-Match`",
        "",
        'An entity tag is quoted: the ETag of version 3 is `"3"`, and `If-Match: "3"` applies a move only',
        "while the game is at version 3 (else `412 VERSION_MISMATCH`, whose `version` is the current",
        "one). A header that is neither `*` nor a comma-separated list of quoted tags (`W/` allowed), such",
        "as `If-Match: 3`, is `400 BAD_ETAG`: it is refused rather than read as a tag that never",
        "matches, which would answer `412` with the very version the client meant.",
        "",
        "## Rule codes of illegal moves",
        "",
        f"`POST /v1/games/{{id}}/moves` (and `…/resign`) answers an illegal move with `{RULE_STATUS}`",
        "and one of these codes; `POST …/moves/validate` gives the same `code`, `detail` and fields",
        "in a `200` with `legal: false`; a record import (`POST /v1/games` with `record`) that meets",
        "an illegal move answers `422` with the rule's code, its fields and `index`, the failing",
        "move's position. `BAD_MOVE` and `UNKNOWN_MOVE_TYPE` are mostly caught by the contract first",
        "(`400 VALIDATION_ERROR` / `UNKNOWN_MOVE_TYPE`).",
        "",
        "The fields listed are always there; those marked *when* only in that case. A hex is",
        "`{q, r}`; an edge is 0-5 (clockwise from north) of the hex the build names.",
        "",
        "| code | the rule it names | fields |",
        "|---|---|---|",
    ]
    lines += [f"| `{code}` | {meaning} | {_rule_fields(code)} |" for code, meaning in CODES.items()]
    used = sorted({f for names in CODE_FIELDS.values() for f in names}
                  | {f for names in SOMETIMES_FIELDS.values() for f in names} | {"index"})
    lines += [
        "",
        "Fields: " + "; ".join(f"`{name}`: {RULE_FIELDS[name]}" for name in used) + ".",
    ]
    return "\n".join(lines) + "\n"


def main() -> int:
    text = render()
    if "--check" in sys.argv:
        if not PAGE.exists() or PAGE.read_text(encoding="utf-8") != text:
            print(f"{PAGE.relative_to(ROOT)} is out of date: run python tools/error_codes_doc.py")
            return 1
        return 0
    PAGE.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
