# turnstream: `make run` runs the main job end to end, `make test` runs every test but the
# fault tests, `make chaos` runs the fault tests (tests/chaos: SIGKILLs, a broker restart,
# a store outage, hostile input, privacy and erasure; a few minutes). `make unit` runs the
# pure tests alone (tests/unit: no broker, no store, no Java; under a minute).
# `make unit` and `make test` run on parallel workers (pytest-xdist, TEST_WORKERS of them,
# one per CPU by default), each with its own broker and stores; TEST_WORKERS=0 runs them
# in this process.
# Each installs what is missing first: the Python virtualenv (.venv) and the Kafka jars
# (Maven Central, cached in ~/.cache/turnstream), plus Java 17 and Maven from Debian when absent.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
CONFIG ?= examples/turnstream.toml
PYTEST_ARGS ?=
TEST_WORKERS ?= auto
XDIST := -n $(TEST_WORKERS) --dist loadscope

.PHONY: run test unit chaos deps system-deps lint format clean

run: deps
	$(BIN)/turnstream demo --config $(CONFIG)

# The `serial` tests run beside the parallel run, in one process of their own (their
# output follows; none selected: pytest's exit 5, not a failure).
test: deps $(if $(wildcard /usr/bin/chromium),,browser-deps)
	@log=$$(mktemp); \
	TURNSTREAM_TESTS_SERIAL=only $(BIN)/pytest --ignore=tests/chaos $(PYTEST_ARGS) >$$log 2>&1 & \
	serial=$$!; \
	$(BIN)/pytest --ignore=tests/chaos $(XDIST) $(PYTEST_ARGS); parallel=$$?; \
	wait $$serial; alone=$$?; echo "--- the serial tests:"; cat $$log; rm -f $$log; \
	[ $$parallel -eq 0 ] && { [ $$alone -eq 0 ] || [ $$alone -eq 5 ]; }

unit: $(VENV)/.installed
	$(BIN)/pytest tests/unit $(XDIST) $(PYTEST_ARGS)

chaos: deps
	$(BIN)/pytest tests/chaos $(PYTEST_ARGS)

deps: system-deps $(VENV)/.installed
	$(BIN)/turnstream infra jars

# Java 17 and Maven run the local broker; install them when this is a Debian machine
# without them (as root, or with sudo).
system-deps:
	@if ! command -v java >/dev/null 2>&1 || ! command -v mvn >/dev/null 2>&1; then \
	  echo "installing Java 17 and Maven (apt-get)"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -q && $$SUDO apt-get install -y -q openjdk-17-jre-headless maven; \
	fi

$(VENV)/.installed: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e ".[worker,dev]"
	# turnstream_dev/ (the local broker, the sample day, the demo) is not in the wheel:
	# this checkout on the virtualenv's path makes it importable (`make run`, the tests).
	$(BIN)/python -c 'import pathlib, sysconfig; pathlib.Path(sysconfig.get_paths()["purelib"], "turnstream-checkout.pth").write_text("$(CURDIR)\n")'
	touch $@

lint: $(VENV)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

format: $(VENV)/.installed
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

clean:
	rm -rf var .pytest_cache .ruff_cache

# Debian's chromium (and its driver) for the console's browser tests (tests/integration/
# console), driven by Playwright from the virtualenv: never `playwright install`, whose
# browser download this machine's network refuses. `make test` runs it when chromium is
# missing.
.PHONY: browser-deps
browser-deps:
	@if [ ! -x /usr/bin/chromium ]; then \
	  echo "installing chromium (apt-get)"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -q && $$SUDO apt-get install -y -q chromium chromium-driver; \
	fi

# The console's screenshots in docs/console/, shown by docs/console.md: the browser tests
# write them only when TURNSTREAM_SCREENSHOTS names a directory (else a temporary one).
.PHONY: screenshots
screenshots: deps $(if $(wildcard /usr/bin/chromium),,browser-deps)
	TURNSTREAM_SCREENSHOTS=docs/console $(BIN)/pytest tests/integration/console $(PYTEST_ARGS)
