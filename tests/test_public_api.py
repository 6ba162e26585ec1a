from __future__ import annotations

import ast
import types
from pathlib import Path

import rag

REPO = Path(__file__).resolve().parents[1]


def test_every_public_name_of_rag_is_in_all_and_exists() -> None:
    public = {
        name
        for name, value in vars(rag).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert public == set(rag.__all__)


def test_bot_imports_only_the_public_api_of_rag() -> None:
    offenders = []
    for path in (REPO / "bot").rglob("*.py"):
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
    assert offenders == []


def test_rag_never_imports_slack() -> None:
    offenders = []
    for path in (REPO / "rag").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [
                f"{path.name}: {n}"
                for n in names
                if n.split(".")[0] in ("slack_sdk", "slack_bolt", "bot")
            ]
    assert offenders == []
