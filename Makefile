PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install generate check test bench clean fixtures

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

test: $(STAMP)
	$(BIN)/acpgen check
	$(BIN)/python -m pytest
	$(BIN)/acpgen conformance -q --package generated/acp_v1 --package generated/acp_v1_unstable --package generated/acp_v2 --package generated/acp_v2_unstable

fixtures: $(STAMP)
	$(BIN)/acpgen conformance-fixtures

bench: $(STAMP)
	$(BIN)/pip install --quiet -e '.[test,bench]'
	$(BIN)/python tests/bench_generate.py
	$(BIN)/python tests/bench.py

clean:
	rm -rf $(VENV) build *.egg-info generator/*.egg-info
