"""The tree shows the architecture: rag/ by stage, no import cycles, small modules and folders.

``rag``'s stages import only earlier stages or the shared modules at its top, so a change's room
is where its inputs come from; ``docs/architecture.md`` draws the same order.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# rag's rooms in the order data flows through them; a room may import only rooms of a lower rank.
# The shared modules (rank 0) are imported by every stage; the entry points (top rank) import any.
RAG_RANKS = {
    "rag.errors": 0,
    "rag.settings": 0,
    "rag.metrics": 0,
    "rag.progress": 0,
    "rag.store": 1,
    "rag.embedding": 2,
    "rag.formats": 3,
    "rag.ingest": 4,
    "rag.sources": 5,
    "rag.retrieval": 6,
    "rag.gate": 7,
    "rag.answering": 8,
    "rag.service": 9,
    "rag.trace": 9,
    "rag.workspaces": 9,
    "rag.runtime": 9,
    "rag.evaluation": 10,
    "rag.cli": 11,
    "rag.commands": 11,
    "rag.demo": 11,
    "rag.textout": 11,
    "rag.eval_public": 11,
    "rag.gate_fit": 11,
    "rag.__main__": 11,
    "rag": 11,
}
MAX_MODULE_LINES = 400
MAX_MODULES_PER_FOLDER = 20


def _modules(package: str) -> dict[str, Path]:
    found = {}
    for path in (REPO / package).rglob("*.py"):
        name = ".".join(path.relative_to(REPO).with_suffix("").parts)
        found[name.removesuffix(".__init__")] = path
    return found


def _imports(path: Path, known: dict[str, Path]) -> Iterator[str]:
    """The project modules ``path`` imports, wherever in the module the import stands."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names if alias.name in known)
        elif isinstance(node, ast.ImportFrom) and node.module in known:
            submodules = [f"{node.module}.{a.name}" for a in node.names]
            named = [m for m in submodules if m in known]
            # `from pkg import module` needs the module; `from pkg import name` the package.
            yield from named
            if len(named) < len(submodules):
                yield node.module


def _graph() -> dict[str, set[str]]:
    known = _modules("rag") | _modules("bot")
    return {name: set(_imports(path, known)) - {name} for name, path in known.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            nxt = next(edges, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _rank(module: str) -> int:
    room = max((r for r in RAG_RANKS if module == r or module.startswith(f"{r}.")), key=len)
    return RAG_RANKS[room]


def test_no_module_of_rag_or_bot_is_in_an_import_cycle() -> None:
    assert _cycles(_graph()) == []


def test_the_cycle_finder_sees_a_cycle_through_three_modules() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]


def test_every_module_of_rag_belongs_to_a_ranked_room() -> None:
    unranked = [
        m for m in _modules("rag") if not any(m == r or m.startswith(f"{r}.") for r in RAG_RANKS)
    ]
    assert unranked == []


def test_rag_stages_import_only_earlier_stages_or_the_shared_modules() -> None:
    graph = {name: deps for name, deps in _graph().items() if name.split(".")[0] == "rag"}
    offenders = [
        f"{name} (rank {_rank(name)}) imports {dep} (rank {_rank(dep)})"
        for name, deps in sorted(graph.items())
        for dep in sorted(deps)
        if dep.split(".")[0] == "rag" and _rank(dep) > _rank(name)
    ]
    assert offenders == []


def test_no_module_of_rag_or_bot_is_longer_than_the_split_point() -> None:
    long = {
        str(path.relative_to(REPO)): lines
        for path in [*(REPO / "rag").rglob("*.py"), *(REPO / "bot").rglob("*.py")]
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}


def test_no_folder_of_rag_or_bot_holds_more_modules_than_a_reader_can_scan() -> None:
    crowded = {
        str(folder.relative_to(REPO)): count
        for folder in [
            REPO / "rag",
            REPO / "bot",
            *(REPO / "rag").rglob("*/"),
            *(REPO / "bot").rglob("*/"),
        ]
        if (count := len(list(folder.glob("*.py")))) > MAX_MODULES_PER_FOLDER
    }
    assert crowded == {}


def test_every_package_of_rag_and_bot_opens_with_its_charter() -> None:
    missing = [
        str(init.relative_to(REPO))
        for init in [*(REPO / "rag").rglob("__init__.py"), *(REPO / "bot").rglob("__init__.py")]
        if not ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
    ]
    assert missing == []


def test_every_module_the_fast_run_leaves_out_is_a_test_module() -> None:
    from tests.conftest import SLOW_MODULES

    assert [m for m in SLOW_MODULES if not (REPO / "tests" / f"{m}.py").exists()] == []
