PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The TypeScript SDK peers of tests/interop (npm ci from the lockfile).
TS_PEERS := tests/interop/ts
TS_STAMP := $(TS_PEERS)/node_modules/.installed

.PHONY: install generate check typecheck lint test fuzz bench clean fixtures runtime-pythons

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

# The generated packages and a user program against each, under mypy --strict
# and pyright strict (one run of each over all four packages).
typecheck: $(STAMP)
	$(BIN)/python -m pytest -q tests/e2e/test_typecheck.py

# ruff; the whole generator under mypy --strict (pyproject.toml), the runtime
# module copied into every package included; that runtime module also under
# pyright strict, as the source it is.
lint: $(STAMP)
	$(BIN)/ruff check generator tests
	$(BIN)/ruff check --extend-select I,UP generator/acpgen/runtime tests/unit/test_runtime.py
	$(BIN)/mypy
	$(BIN)/pyright

# The conformance suite runs inside pytest, once per package. Test files are
# spread over the machine's cores, each file's tests on one worker (module
# fixtures such as the one mypy and pyright run stay single).
# The runtime modules (copied into every package) unit-tested on the other
# Pythons the packages claim, from pyenv: a venv each with pytest and
# hypothesis only (the runtime needs nothing else; 6.168 is the last
# hypothesis for Python 3.10).
OTHER_PYTHONS := 3.10 3.13
RUNTIME_TESTS = $(wildcard tests/unit/test_runtime*.py tests/unit/test_jsonrpc.py tests/unit/test_transport.py tests/unit/test_connection_runtime.py)

runtime-pythons:
	@for v in $(OTHER_PYTHONS); do \
	  py=$$(ls -d $${PYENV_ROOT:-$$HOME/.pyenv}/versions/$$v.*/bin/python3 2>/dev/null | sort -V | tail -1); \
	  if [ -z "$$py" ]; then echo "Python $$v is not installed under pyenv: the runtime tests need it"; exit 1; fi; \
	  if [ ! -x .venv-$$v/bin/pytest ]; then \
	    $$py -m venv .venv-$$v && .venv-$$v/bin/pip install --quiet "pytest==9.2.0" "hypothesis==6.168.5" || exit 1; \
	  fi; \
	  echo "== the runtime's unit tests on Python $$v"; \
	  PYTHONPATH=generator .venv-$$v/bin/python -m pytest -q -p no:cacheprovider $(RUNTIME_TESTS) || exit 1; \
	done

test: $(STAMP) $(TS_STAMP) lint runtime-pythons
	$(BIN)/acpgen check
	$(BIN)/python -m pytest -n auto --dist loadfile

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
	$(BIN)/python tests/bench_strict.py
	$(BIN)/python tests/bench_validate.py
	$(BIN)/python tests/bench_protocol.py
	$(BIN)/python tests/bench_session.py

clean:
	rm -rf $(VENV) .venv-3.* build *.egg-info generator/*.egg-info $(TS_PEERS)/node_modules
