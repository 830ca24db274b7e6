"""The arrows between the rooms of service/ go one way (docs/architecture.md).

The import graph is read from the source with `ast`: every import, at the top of a module, inside
a function or under TYPE_CHECKING, counts. Packages are the directories under service/ (the
top-level modules, `service/__main__.py` and `service/serving.py`, are nodes of their own).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SERVICE = ROOT / "service"

# Modules that wire a process together; they may import anything, `api` included.
ENTRY_POINTS = {"service.__main__", "service.serving"}

# The layers, lowest first: a package imports only packages of lower layers (and itself). A
# package not listed here is held to the three rules of the tests below only.
LAYERS: list[set[str]] = [
    {"engine"},
    {"store", "observability", "render", "webhooks"},
    {"live", "jobs", "sim", "tenants"},
    {"referee"},
    {"archive"},
    {"worker"},
    {"api"},
]


@dataclass(frozen=True)
class Import:
    module: str  # the importing module, dotted
    target: str  # the module or name imported, dotted
    line: int

    @property
    def source_package(self) -> str:
        return package_of(self.module)

    @property
    def target_package(self) -> str:
        return package_of(self.target)


def package_of(module: str) -> str:
    """`service.referee.games` -> `referee`; a top-level module is its own node."""
    parts = module.split(".")
    if len(parts) == 2 and (SERVICE / f"{parts[1]}.py").exists():
        return module
    return parts[1] if len(parts) > 1 else module


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path) -> Iterator[Import]:
    module = module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(module, alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            yield Import(module, target, node.lineno)
            if node.module is None or node.level:
                # `from . import x` / `from .pkg import x`: x may be a module of its own.
                for alias in node.names:
                    yield Import(module, f"{target}.{alias.name}", node.lineno)


def project_imports() -> list[Import]:
    found = []
    for path in sorted(SERVICE.rglob("*.py")):
        found += [i for i in imports_of(path) if i.target == "service" or i.target.startswith("service.")]
    return found


def package_edges(imports: list[Import]) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for i in imports:
        if i.target == "service":
            continue
        a, b = i.source_package, i.target_package
        if a != b:
            edges.setdefault(a, set()).add(b)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one package (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(component)

    for v in sorted(set(edges) | {w for ws in edges.values() for w in ws}):
        if v not in index:
            visit(v)
    return found


def where(imports: list[Import]) -> list[str]:
    return [f"{i.module}:{i.line} imports {i.target}" for i in imports]


def test_the_graph_is_read() -> None:
    """The reader finds what is certainly there (else the tests below would pass on nothing)."""
    imports = project_imports()
    edges = package_edges(imports)
    assert "engine" in edges["referee"] and "referee" in edges["api"]
    assert any(i.module == "service.api.routes.games" and i.target.startswith("service.api.")
               for i in imports)


def test_no_import_cycle_between_packages() -> None:
    assert cycles(package_edges(project_imports())) == []


def test_the_cycle_finder_finds_cycles() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]
    assert cycles({"a": {"b"}, "b": {"c"}}) == []


def test_nothing_outside_api_imports_api_but_the_entry_points() -> None:
    upward = [i for i in project_imports()
              if i.target_package == "api" and i.source_package != "api"
              and i.module not in ENTRY_POINTS]
    assert where(upward) == []


def test_the_engine_imports_nothing_of_the_project_outside_the_engine() -> None:
    outside = [i for i in project_imports() if i.source_package == "engine" and i.target_package != "engine"]
    assert where(outside) == []


def test_packages_import_only_lower_layers() -> None:
    rank = {package: n for n, layer in enumerate(LAYERS) for package in layer}
    upward = [i for i in project_imports()
              if i.module not in ENTRY_POINTS and i.target != "service"
              and i.source_package in rank and i.target_package in rank
              and i.source_package != i.target_package
              and rank[i.target_package] >= rank[i.source_package]]
    assert where(upward) == []


# The api's own rooms, lowest first: what it answers with, what every request passes through,
# what reads a request, the resources, and the app that wires them (service/api/__init__.py).
API_ROOMS: list[set[str]] = [
    {"error_codes"},
    {"responses", "pages"},
    {"plumbing"},
    {"checks"},
    {"routes"},
    {"__init__"},
]


def api_room_of(module: str) -> str | None:
    """`service.api.routes.games` -> `routes`; `service.api` -> `__init__`; outside api: None."""
    parts = module.split(".")
    if parts[:2] != ["service", "api"]:
        return None
    return parts[2] if len(parts) > 2 else "__init__"


def test_the_api_rooms_import_only_lower_rooms() -> None:
    rank = {room: n for n, layer in enumerate(API_ROOMS) for room in layer}
    api = SERVICE / "api"
    rooms = {path.stem if path.is_file() else path.name
             for path in api.iterdir() if path.suffix == ".py" or (path / "__init__.py").exists()}
    assert rooms <= set(rank), f"a room of api not in API_ROOMS: {rooms - set(rank)}"
    upward = [i for i in project_imports()
              if api_room_of(i.module) in rank and api_room_of(i.target) in rank
              and api_room_of(i.module) != api_room_of(i.target)
              and rank[api_room_of(i.target)] >= rank[api_room_of(i.module)]]
    assert where(upward) == []
