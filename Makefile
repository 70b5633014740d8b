# designlab: `make run` serves the app at http://127.0.0.1:8000; `make test` runs every check.
# Both do all set-up first: virtual environment, Python packages, npm assets, database migration.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000
CHROMIUM := /usr/bin/chromium
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)

.PHONY: run test setup venv python-deps compiler assets migrate chromium check

run: setup
	$(BIN)/designlab serve --host $(HOST) --port $(PORT)

test: setup chromium check

setup: python-deps assets migrate

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

venv: $(BIN)/python

# The install builds the simulator's data plane with mypyc (setup.py, simulator/native.py) when a
# C compiler and Python's headers are here, else installs it as pure Python (same results,
# slower); it runs again only when the packaging or the simulator's engine changed. Then every
# module is byte-compiled, so a `designlab` command does not compile our modules on every start
# when the environment sets PYTHONDONTWRITEBYTECODE (an edited module is compiled again in memory).
python-deps: $(VENV)/.installed
	$(BIN)/python -m compileall -q app simulator

# The compiled modules' sources, as simulator/native.py lists them.
COMPILED_SOURCES := $(shell sed -n 's/^    "\(simulator\.[a-z_.]*\)",$$/\1/p' simulator/native.py | tr . / | sed 's/$$/.py/')

$(VENV)/.installed: $(BIN)/python pyproject.toml setup.py mypyc.ini simulator/native.py $(COMPILED_SOURCES)
	@$(MAKE) --no-print-directory compiler
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	$(BIN)/python -c "import simulator.native as n; print('simulator:', n.state().describe())"
	touch $@

# A C compiler and Python's headers for the compiled simulator, from Debian's packages when
# missing; without them the install goes on as pure Python.
compiler:
	@if ! command -v cc >/dev/null || [ ! -f "$$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_path("include"))')/Python.h" ]; then \
		($(SUDO) apt-get update && $(SUDO) apt-get install -y --no-install-recommends gcc libc6-dev python3-dev) \
		|| echo "no C compiler: the simulator installs as pure Python (identical results, slower)"; \
	fi

assets:
	npm ci --ignore-scripts --no-audit --no-fund
	$(BIN)/python scripts/vendor_assets.py

migrate: python-deps
	$(BIN)/designlab migrate

chromium:
	@if [ ! -x $(CHROMIUM) ]; then \
		$(SUDO) apt-get update && $(SUDO) apt-get install -y --no-install-recommends chromium; \
	fi

check:
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/pytest
