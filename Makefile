PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install generate check typecheck lint test bench clean fixtures

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

generate: $(STAMP)
	$(BIN)/acpgen generate

check: $(STAMP)
	$(BIN)/acpgen check

# The generated packages and a user program against each, under mypy --strict
# and pyright strict (one run of each over all four packages).
typecheck: $(STAMP)
	$(BIN)/python -m pytest -q tests/e2e/test_typecheck.py

# ruff; mypy over the generator (modules not clean yet are listed in
# pyproject.toml); the runtime module copied into every package under mypy
# --strict and pyright strict, as the source it is.
lint: $(STAMP)
	$(BIN)/ruff check generator tests
	$(BIN)/ruff check --extend-select I,UP generator/acpgen/runtime tests/unit/test_runtime.py
	$(BIN)/mypy
	$(BIN)/mypy --strict generator/acpgen/runtime
	$(BIN)/pyright

test: $(STAMP) lint
	$(BIN)/acpgen check
	$(BIN)/python -m pytest
	$(BIN)/acpgen conformance -q --package generated/acp_v1 --package generated/acp_v1_unstable --package generated/acp_v2 --package generated/acp_v2_unstable

fixtures: $(STAMP)
	$(BIN)/acpgen conformance-fixtures

bench: $(STAMP)
	$(BIN)/pip install --quiet agent-client-protocol
	$(BIN)/python tests/bench.py

clean:
	rm -rf $(VENV) build *.egg-info generator/*.egg-info
