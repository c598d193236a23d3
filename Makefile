PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Two install levels in one venv: the generator alone (what `make generate`
# and `make check` need), and with the test extra (mypy, pyright, black,
# hypothesis, the official SDK ...), which the other targets need.
GEN_STAMP := $(VENV)/.installed-generator
STAMP := $(VENV)/.installed
# The TypeScript SDK peers of tests/interop (npm ci from the lockfile).
TS_PEERS := tests/interop/ts
TS_STAMP := $(TS_PEERS)/node_modules/.installed

.PHONY: install generate check typecheck lint test test-tools fuzz bench clean fixtures runtime-pythons browser

$(GEN_STAMP): pyproject.toml generator/acpgen/__init__.py
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet -e .
	touch $(GEN_STAMP)

$(STAMP): pyproject.toml generator/acpgen/__init__.py
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(GEN_STAMP) $(STAMP)

$(TS_STAMP): $(TS_PEERS)/package.json $(TS_PEERS)/package-lock.json
	cd $(TS_PEERS) && npm ci --no-audit --no-fund --loglevel=error
	touch $(TS_STAMP)

# The browser tests/e2e/test_report_browser.py drives (headless, through
# Playwright, which never downloads a browser of its own): Debian's chromium,
# installed with apt-get when it is missing (as root, or with sudo that needs
# no password); otherwise the command to run is said and make stops.
CHROMIUM := /usr/bin/chromium
CHROMIUM_INSTALL := apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium

browser:
	@if [ ! -x $(CHROMIUM) ]; then \
	  echo "make: installing Debian's chromium (the report's browser test drives it)"; \
	  if ! command -v apt-get >/dev/null; then \
	    echo "make: $(CHROMIUM) is missing and there is no apt-get: install Chromium at $(CHROMIUM) (Debian: apt-get install chromium)"; exit 2; \
	  elif [ "$$(id -u)" = 0 ]; then sh -c '$(CHROMIUM_INSTALL)' || exit 2; \
	  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then sudo sh -c '$(CHROMIUM_INSTALL)' || exit 2; \
	  else echo "make: $(CHROMIUM) is missing: run as root: $(CHROMIUM_INSTALL)"; exit 2; fi; \
	fi

install: $(STAMP) $(TS_STAMP) browser

generate: $(GEN_STAMP)
	$(BIN)/acpgen generate

check: $(GEN_STAMP)
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
	$(BIN)/ruff format --check generator tests
	$(BIN)/mypy
	$(BIN)/pyright

# What `make test` needs beyond python3 and make, said before anything runs.
test-tools:
	@echo "make test: needs python3 (3.10+), make, node with npm (npm ci installs the TypeScript SDK peers of tests/interop), Debian's chromium at $(CHROMIUM) (installed with apt-get when missing, as root) and Pythons $(OTHER_PYTHONS) under pyenv (the runtime's unit tests); runs lint, the runtime tests, acpgen check, the suite, then the type check of the generated packages (a few minutes, quiet meanwhile)"
	@command -v npm >/dev/null || { echo "make test: npm is not on PATH; install node and npm (the TypeScript SDK peers of tests/interop need them)"; exit 2; }

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

# The suites of the message path, run a second time without orjson (the
# validate suites run with both backends themselves).
JSON_SUITES := tests/unit/test_jsonrpc.py tests/unit/test_connection_runtime.py tests/unit/test_transport.py tests/e2e/test_connection.py

# The conformance suite runs inside pytest, once per package. Test files are
# spread over the machine's cores, each file's tests on one worker. The
# type-check module (mypy --strict and pyright strict over the four packages,
# minutes of silence) runs as its own announced step after the rest.
test: test-tools browser $(STAMP) $(TS_STAMP) lint runtime-pythons
	$(BIN)/acpgen check
	@echo "make test: the suite (tests/e2e/test_typecheck.py runs next, on its own)"
	$(BIN)/python -m pytest -n auto --dist loadfile --ignore=tests/e2e/test_typecheck.py
	@echo "make test: the JSON-RPC and connection suites again with the standard library's json (ACPGEN_JSON=stdlib; the suite ran with orjson)"
	ACPGEN_JSON=stdlib $(BIN)/python -m pytest -q $(JSON_SUITES)
	@echo "make test: type-checking the four generated packages and a user program for each with mypy --strict and pyright strict (tests/e2e/test_typecheck.py); this takes a few minutes and prints nothing until it is done"
	$(BIN)/python -m pytest -q tests/e2e/test_typecheck.py

# The property tests with real randomness and many more examples (see
# tests/conftest.py); a failure is saved in .hypothesis/ and replayed first.
# Then hostile peers (garbage, deep nesting, huge lines, floods, half-closed
# pipes) against the example agents and client for FUZZ_SECONDS (a failure
# prints its seed: python tests/fuzz_peers.py SECONDS SEED replays the run),
# and the memory a flooding or non-reading peer makes an agent hold.
FUZZ_SECONDS ?= 120
fuzz: $(STAMP)
	HYPOTHESIS_PROFILE=fuzz $(BIN)/python -m pytest -m hypothesis
	$(BIN)/python tests/fuzz_peers.py $(FUZZ_SECONDS)
	$(BIN)/python tests/bench_hostile_memory.py

fixtures: $(STAMP)
	$(BIN)/acpgen conformance-fixtures

# Each benchmark prints its figures and records the ratios against its
# baselines in $(BENCH_SUMMARY); the table of them all is printed at the end.
BENCH_SUMMARY := .bench-summary.jsonl
bench: $(STAMP) browser
	$(BIN)/pip install --quiet -e '.[test,bench]'
	rm -f $(BENCH_SUMMARY)
	ACPGEN_BENCH_SUMMARY=$(BENCH_SUMMARY) $(BIN)/python tests/bench_generate.py
	ACPGEN_BENCH_SUMMARY=$(BENCH_SUMMARY) $(BIN)/python tests/bench.py
	ACPGEN_BENCH_SUMMARY=$(BENCH_SUMMARY) $(BIN)/python tests/bench_strict.py
	ACPGEN_BENCH_SUMMARY=$(BENCH_SUMMARY) $(BIN)/python tests/bench_validate.py
	ACPGEN_BENCH_SUMMARY=$(BENCH_SUMMARY) $(BIN)/python tests/bench_protocol.py
	ACPGEN_BENCH_SUMMARY=$(BENCH_SUMMARY) $(BIN)/python tests/bench_message.py
	ACPGEN_BENCH_SUMMARY=$(BENCH_SUMMARY) $(BIN)/python tests/bench_outgoing.py
	ACPGEN_BENCH_SUMMARY=$(BENCH_SUMMARY) $(BIN)/python tests/bench_session.py
	ACPGEN_BENCH_SUMMARY=$(BENCH_SUMMARY) $(BIN)/python tests/bench_ws.py
	ACPGEN_BENCH_SUMMARY=$(BENCH_SUMMARY) $(BIN)/python tests/bench_tap.py
	ACPGEN_BENCH_SUMMARY=$(BENCH_SUMMARY) $(BIN)/python tests/bench_report.py
	$(BIN)/python tests/bench_summary.py $(BENCH_SUMMARY)

clean:
	rm -rf $(VENV) .venv-3.* build *.egg-info generator/*.egg-info $(TS_PEERS)/node_modules
