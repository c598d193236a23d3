PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The TypeScript SDK peers of tests/interop (npm ci from the lockfile).
TS_PEERS := tests/interop/ts
TS_STAMP := $(TS_PEERS)/node_modules/.installed

.PHONY: install generate check test bench clean fixtures

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

$(TS_STAMP): $(TS_PEERS)/package.json $(TS_PEERS)/package-lock.json
	cd $(TS_PEERS) && npm ci --no-audit --no-fund --loglevel=error
	touch $(TS_STAMP)

install: $(STAMP) $(TS_STAMP)

generate: $(STAMP)
	$(BIN)/acpgen generate

check: $(STAMP)
	$(BIN)/acpgen check

test: $(STAMP) $(TS_STAMP)
	$(BIN)/acpgen check
	$(BIN)/python -m pytest
	$(BIN)/acpgen conformance -q --package generated/acp_v1 --package generated/acp_v1_unstable --package generated/acp_v2 --package generated/acp_v2_unstable

fixtures: $(STAMP)
	$(BIN)/acpgen conformance-fixtures

bench: $(STAMP)
	$(BIN)/python tests/bench.py
	$(BIN)/python tests/bench_validate.py
	$(BIN)/python tests/bench_protocol.py

clean:
	rm -rf $(VENV) build *.egg-info generator/*.egg-info $(TS_PEERS)/node_modules
