from __future__ import annotations

from pathlib import Path

import pytest

from rag import ModelFileError
from rag.embedding.model_files import DEFAULT_MODEL_FILES, assemble_default_model, verify_model_file


def test_default_model_folder_is_assembled_from_installed_packages(tmp_path: Path) -> None:
    folder = assemble_default_model(tmp_path)
    assert sorted(p.name for p in folder.iterdir()) == sorted(f.name for f in DEFAULT_MODEL_FILES)
    # Assembling again (another process starting) keeps the same verified files.
    assert assemble_default_model(tmp_path) == folder


def test_model_file_with_wrong_checksum_is_rejected(tmp_path: Path) -> None:
    tampered = tmp_path / "model.onnx"
    tampered.write_bytes(b"not the model")
    with pytest.raises(ModelFileError, match="SHA-256"):
        verify_model_file(tampered, DEFAULT_MODEL_FILES[0].sha256)
