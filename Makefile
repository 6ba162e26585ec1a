# Two front doors: `make demo` (set up + run the local job) and `make test` (set up + run tests).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo test lint typecheck check bench-ingest serve clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[dev]"
	touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(BIN)/runbook demo

serve: $(STAMP)
	$(BIN)/runbook serve

# pytest exits 5 when it collects no test: that is a failure here, not a pass.
test: $(STAMP)
	$(BIN)/pytest -q -p no:cacheprovider; status=$$?; \
	if [ $$status -eq 5 ]; then echo "no tests were collected" >&2; exit 1; fi; exit $$status

lint: $(STAMP)
	$(BIN)/ruff check rag bot tests
	$(BIN)/ruff format --check rag bot tests

typecheck: $(STAMP)
	$(BIN)/mypy

check: lint typecheck test

bench-ingest: $(STAMP)
	$(BIN)/runbook bench ingest

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
