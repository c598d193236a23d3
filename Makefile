PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install generate check test fuzz bench clean fixtures

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

# The conformance suite runs inside pytest, once per package.
test: $(STAMP)
	$(BIN)/acpgen check
	$(BIN)/python -m pytest

# The property tests with real randomness and many more examples (see
# tests/conftest.py); a failure is saved in .hypothesis/ and replayed first.
fuzz: $(STAMP)
	HYPOTHESIS_PROFILE=fuzz $(BIN)/python -m pytest -m hypothesis

fixtures: $(STAMP)
	$(BIN)/acpgen conformance-fixtures

bench: $(STAMP)
	$(BIN)/pip install --quiet -e '.[test,bench]'
	$(BIN)/python tests/bench_generate.py
	$(BIN)/python tests/bench.py

clean:
	rm -rf $(VENV) build *.egg-info generator/*.egg-info
