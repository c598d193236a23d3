PYTHON ?= python3
# Every Python process the targets start writes its bytecode (and pytest its
# rewritten test modules) to __pycache__, even where the environment says
# not to: the suite starts hundreds of processes that import the generated
# packages and acpgen, and compiling them again in each cost 0.3 s of CPU a
# process (import acp_v1 and its connection: 0.5 s from source, 0.2 s from
# bytecode).
unexport PYTHONDONTWRITEBYTECODE
VENV := .venv
BIN := $(VENV)/bin
# Two install levels in one venv: the generator alone (what `make generate`
# and `make check` need), and with the test extra (mypy, pyright, black,
# hypothesis, the official SDK ...), which the other targets need.
GEN_STAMP := $(VENV)/.installed-generator
STAMP := $(VENV)/.installed
# The TypeScript SDK peers of tests/interop, at the lockfile's versions.
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
	# npm install from the lockfile (--no-save: it is never rewritten), not
	# npm ci: acpx's @openclaw/fs-safe has one optional build per platform,
	# the registry serves only some of them, and npm ci refuses a lockfile
	# that lacks the others.
	cd $(TS_PEERS) && npm install --no-save --no-audit --no-fund --loglevel=error
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
	@echo "make test: needs python3 (3.10+), make, node with npm (npm installs the TypeScript SDK peers of tests/interop from their lockfile), Debian's chromium at $(CHROMIUM) (installed with apt-get when missing, as root) and Pythons $(OTHER_PYTHONS) under pyenv (the unit tests and the packages' basics run on them too); runs ruff, mypy, pyright, acpgen check, the tests on $(OTHER_PYTHONS), the suite, the JSON-RPC suites with stdlib json, then the type check of the generated packages, every step even when one before failed, with a line per step and a table of their times at the end"
	@command -v npm >/dev/null || { echo "make test: npm is not on PATH; install node and npm (the TypeScript SDK peers of tests/interop need them)"; exit 2; }

# The other Pythons the packages and the generator claim, from pyenv: a venv
# each with the generator (editable) and what its unit tests import (the
# test extra's pins, less the tools that run on the main Python only: mypy,
# pyright, pre-commit, the official SDK, Playwright; 6.168 is the last
# hypothesis and 16.1 the last websockets for Python 3.10), in which the
# generator's unit tests (the runtime's among them) and the four packages'
# basics (tests/e2e/test_package_basics.py) run.
OTHER_PYTHONS := 3.10 3.13
OTHER_DEPS := "pytest==9.1.1" "pytest-xdist==3.8.0" "hypothesis==6.168.5" "black>=26.1,<27" "orjson>=3.10" "websockets==17.4; python_version >= '3.11'" "websockets==16.1.1; python_version < '3.11'" "httpx==0.28.1" "h2==4.4.1" "uvicorn==0.54.0"
OTHER_TESTS := tests/unit tests/e2e/test_package_basics.py
OTHER_STAMPS := $(foreach v,$(OTHER_PYTHONS),.venv-$(v)/.installed)

.venv-%/.installed: pyproject.toml generator/acpgen/__init__.py
	@py=$$(ls -d $${PYENV_ROOT:-$$HOME/.pyenv}/versions/$*.*/bin/python3 2>/dev/null | sort -V | tail -1); \
	if [ -z "$$py" ]; then echo "make: Python $* is not installed under pyenv: the tests on it need it"; exit 1; fi; \
	rm -rf .venv-$* && $$py -m venv .venv-$* && .venv-$*/bin/pip install --quiet --upgrade pip && \
	.venv-$*/bin/pip install --quiet -e . $(OTHER_DEPS)
	touch $@

runtime-pythons: $(OTHER_STAMPS)

# The suites of the message path, run a second time without orjson (the
# validate suites run with both backends themselves).
JSON_SUITES := tests/unit/test_jsonrpc.py tests/unit/test_connection_runtime.py tests/unit/test_transport.py tests/e2e/test_connection.py

# `make test`: the installs first (they must succeed), then every step, each
# run even when an earlier one failed; tests/steps.py prints a line per step
# with its wall and CPU time, a table at the end, and fails if any step did.
# The suite spreads its tests over the machine's cores one by one (xdist's
# loadgroup: only a module with a module-scoped fixture of its own keeps its
# tests on one worker, see tests/conftest.py); the type check of the four
# packages (mypy --strict and pyright strict, minutes of silence) runs last.
PYTEST := $(BIN)/python -m pytest -p no:cacheprovider
test: test-tools browser $(STAMP) $(TS_STAMP) $(OTHER_STAMPS)
	$(PYTHON) tests/steps.py \
	  "ruff=$(BIN)/ruff check generator tests && $(BIN)/ruff format --check generator tests" \
	  "mypy=$(BIN)/mypy" \
	  "pyright=$(BIN)/pyright" \
	  "check=$(BIN)/acpgen check" \
	  $(foreach v,$(OTHER_PYTHONS),"python$(v)=.venv-$(v)/bin/python -m pytest -q -p no:cacheprovider -n 2 $(OTHER_TESTS)") \
	  "suite=$(PYTEST) -n auto --dist loadgroup --durations=20 --ignore=tests/e2e/test_typecheck.py" \
	  "stdlib-json=ACPGEN_JSON=stdlib $(PYTEST) -q $(JSON_SUITES)" \
	  "typecheck=$(PYTEST) -q tests/e2e/test_typecheck.py"

# The property tests with real randomness and many more examples (see
# tests/conftest.py); a failure is saved in .hypothesis/ and replayed first.
# Then hostile peers (garbage, deep nesting, huge lines, floods, half-closed
# pipes) against the example agents and client for FUZZ_SECONDS (a failure
# prints its seed: python tests/fuzz_peers.py SECONDS SEED replays the run),
# hostile network peers against a served agent for FUZZ_SECONDS too (an
# authenticated initialize answered after every round, the server's size
# bounded; tests/fuzz_network.py SECONDS SEED replays),
# and the memory a flooding or non-reading peer makes an agent hold (over
# stdio, and a WebSocket ping flood against a served agent), and what a
# hostile server makes the network transports hold.
FUZZ_SECONDS ?= 120
fuzz: $(STAMP)
	HYPOTHESIS_PROFILE=fuzz $(BIN)/python -m pytest -m hypothesis
	$(BIN)/python tests/fuzz_peers.py $(FUZZ_SECONDS)
	$(BIN)/python tests/fuzz_network.py $(FUZZ_SECONDS)
	$(BIN)/python tests/bench_hostile_memory.py
	$(BIN)/python tests/bench_client_memory.py
	$(BIN)/python tests/bench_ping_flood.py

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
	ACPGEN_BENCH_SUMMARY=$(BENCH_SUMMARY) $(BIN)/python tests/bench_import.py --breakdown
	ACPGEN_BENCH_SUMMARY=$(BENCH_SUMMARY) $(BIN)/python tests/bench_outgoing.py
	ACPGEN_BENCH_SUMMARY=$(BENCH_SUMMARY) $(BIN)/python tests/bench_session.py
	ACPGEN_BENCH_SUMMARY=$(BENCH_SUMMARY) $(BIN)/python tests/bench_ws.py
	ACPGEN_BENCH_SUMMARY=$(BENCH_SUMMARY) $(BIN)/python tests/bench_tap.py
	ACPGEN_BENCH_SUMMARY=$(BENCH_SUMMARY) $(BIN)/python tests/bench_report.py
	$(BIN)/python tests/bench_summary.py $(BENCH_SUMMARY)

clean:
	rm -rf $(VENV) .venv-3.* build *.egg-info generator/*.egg-info $(TS_PEERS)/node_modules
