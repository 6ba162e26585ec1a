from __future__ import annotations

import ast
import importlib
import types
from pathlib import Path

import pytest

import rag

REPO = Path(__file__).resolve().parents[1]


def _type_checking_imports() -> dict[str, str]:
    """Each name ``rag/__init__.py`` imports under ``if typing.TYPE_CHECKING:`` → its module."""
    tree = ast.parse((REPO / "rag" / "__init__.py").read_text(encoding="utf-8"))
    block = next(
        node
        for node in tree.body
        if isinstance(node, ast.If) and ast.unparse(node.test) == "typing.TYPE_CHECKING"
    )
    return {
        alias.name: node.module
        for node in block.body
        if isinstance(node, ast.ImportFrom) and node.module
        for alias in node.names
    }


def test_every_public_name_of_rag_is_in_all_and_exists() -> None:
    public = {
        name
        for name in dir(rag)
        if not name.startswith("_") and not isinstance(getattr(rag, name), types.ModuleType)
    }
    assert public == set(rag.__all__)


def test_rag_resolves_each_public_name_from_the_module_type_checkers_see() -> None:
    # mypy and the import-cycle check in tests/test_layout.py read the TYPE_CHECKING imports;
    # the names resolved at run time must come from exactly those modules.
    imported = _type_checking_imports()
    assert set(imported) == set(rag.__all__)
    wrong = [
        name
        for name, module in imported.items()
        if getattr(rag, name) is not getattr(importlib.import_module(module), name)
    ]
    assert wrong == []


def test_an_unknown_name_of_rag_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        rag.no_such_name  # type: ignore[attr-defined]  # noqa: B018


def _imports_past_the_public_api_of_rag(folder: Path) -> list[str]:
    """Imports under ``folder`` of a ``rag.`` submodule or of a name not in ``rag.__all__``."""
    offenders = []
    for path in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("rag"):
                if node.module != "rag":
                    offenders.append(f"{path.name}: from {node.module}")
                offenders += [
                    f"{path.name}: {a.name}" for a in node.names if a.name not in rag.__all__
                ]
            elif isinstance(node, ast.Import):
                offenders += [
                    f"{path.name}: import {a.name}" for a in node.names if a.name.startswith("rag.")
                ]
    return offenders


def test_bot_imports_only_the_public_api_of_rag() -> None:
    assert _imports_past_the_public_api_of_rag(REPO / "bot") == []


def test_benchmarks_import_only_the_public_api_of_rag() -> None:
    assert _imports_past_the_public_api_of_rag(REPO / "bench") == []


# Chat platform SDKs and surface packages: the core layers below them must never import these.
_SURFACES = ("slack_sdk", "slack_bolt", "microsoft_agents")


def _imported_modules(folder: Path) -> list[tuple[str, str]]:
    found = []
    for path in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found += [(path.name, alias.name) for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                found.append((path.name, node.module))
    return found


def _is_surface(module: str) -> bool:
    return module.split(".")[0] in _SURFACES or module.startswith(("bot.slack", "bot.teams"))


def test_rag_never_imports_a_chat_platform_or_the_bot() -> None:
    offenders = [
        f"{name}: {module}"
        for name, module in _imported_modules(REPO / "rag")
        if _is_surface(module) or module.split(".")[0] == "bot"
    ]
    assert offenders == []


def test_bot_core_never_imports_a_chat_platform_or_a_surface_package() -> None:
    offenders = [
        f"{name}: {module}"
        for name, module in _imported_modules(REPO / "bot" / "core")
        if _is_surface(module)
    ]
    assert offenders == []


def test_rag_never_imports_the_benchmarks() -> None:
    offenders = [
        f"{name}: {module}"
        for name, module in _imported_modules(REPO / "rag")
        if module.split(".")[0] == "bench"
    ]
    assert offenders == []
