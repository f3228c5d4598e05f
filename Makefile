# The two README commands (`make demo`, `make test`) and `make bench`: each sets up .venv itself.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Numba's cache: NUMBA_CACHE_DIR if set, else .venv/numba-cache, the folder every entry point uses
# (kernels/__init__.py), so what `make demo` compiles serves the README's commands.

.PHONY: demo test bench check-plain-numba clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $@ $(VENV)/.installed

demo: $(VENV)/.installed
	$(BIN)/python scripts/warm_kernels.py
	$(BIN)/wargame-odds report reports/demo.toml

# The suite runs on every core (pytest-xdist; the tests sharing a slow fixture go to one worker together,
# see SHARED_FIXTURE_MODULES in tests/conftest.py).  The kernels are compiled (or loaded from the cache)
# once before the workers start, so that they do not all compile the Epic kernel at once.  One worker per
# usable core, at most 4 (each worker holds the kernels and its data, about 1 GB).
TEST_WORKERS ?= $(shell $(PYTHON) -c "import os; print(min(4, len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count() or 1))")
test: $(VENV)/.installed-test
	sh scripts/install-chromium.sh
	$(BIN)/python scripts/warm_kernels.py
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS)

bench: $(VENV)/.installed
	$(BIN)/python benchmarks/run.py

# Every shipped scenario on a kernel gives the same JSON with plain numba.njit (WARGAME_ODDS_PLAIN_NUMBA=1) as in the
# extended mode, each compiled into an empty cache (a few minutes of CPU; docs/numba.md).
check-plain-numba: $(VENV)/.installed
	$(BIN)/python scripts/check_plain_numba.py

clean:
	rm -rf $(VENV) reports/out
