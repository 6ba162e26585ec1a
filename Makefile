# Thin aliases for dev.py, which works where make is not installed.
PYTHON ?= python3

.PHONY: setup demo test lint typecheck check bench-ingest clean

setup demo test lint typecheck bench-ingest:
	$(PYTHON) dev.py $@

check: lint typecheck test

clean:
	rm -rf .venv .pytest_cache .mypy_cache .ruff_cache
