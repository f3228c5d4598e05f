# The two README commands (`make demo`, `make test`) and `make bench`: each sets up .venv itself and installs
# Python packages only (no sudo, no system packages: .ci/run installs the browser the report page test uses).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Numba's cache: NUMBA_CACHE_DIR if set, else .venv/numba-cache, the folder every entry point uses
# (wargame_odds.kernels.use_one_cache_dir, which `import wargame_odds` calls), so what `make demo` compiles serves the
# README's commands.

.PHONY: demo test bench bench-compare check-bounds check-plain-numba clean

# The pip that `venv` brings (Python >= 3.11: pip >= 22.3) installs the package editable as it is: not upgrading it
# saves a download and about 5 s.
$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# demo: the package and the parquet extra (the report's Parquet tables); test: every extra the suite uses.
# PIP_QUIET_EDITABLE keeps setuptools' "Editable installation" banner (a warning about folders shadowing the
# package, which does not apply to a checkout installed in place) off a new user's screen; every other warning shows.
# --no-compile: pip does not byte-compile the dependencies' 6,300 modules at install (about 9 s of CPU); Python
# compiles those a command imports when it first imports them (about 6 s of CPU in `make demo`'s compile and report).
PIP_QUIET_EDITABLE := PYTHONWARNINGS="ignore:Editable installation"
PIP_INSTALL := $(PIP_QUIET_EDITABLE) $(BIN)/python -m pip install -q --no-compile
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(PIP_INSTALL) -e '.[parquet]'
	touch $@

# the test extra includes the app extra: `make demo` after `make test` installs nothing again
$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(PIP_INSTALL) -e '.[test,dask,parquet]'
	touch $@ $(VENV)/.installed $(VENV)/.installed-core $(VENV)/.installed-app

# demo's two steps: the package with its core dependencies, then the requirements of the parquet and app extras
# (scripts/extra_requirements.py reads them from pyproject.toml), which `make demo` installs while the kernels
# compile; the package itself is not installed again.
$(VENV)/.installed-core: pyproject.toml | $(BIN)/python
	$(PIP_INSTALL) -e .
	touch $@

$(VENV)/.installed-app: pyproject.toml | $(VENV)/.installed-core
	$(BIN)/python scripts/extra_requirements.py parquet app > $(VENV)/extras.txt
	$(PIP_INSTALL) -r $(VENV)/extras.txt
	touch $@ $(VENV)/.installed

# The kernels compile (scripts/warm_kernels.py) while the extras install beside them (a second make, in the
# background): the compile needs neither extra, and pip unpacking them and the compile share the two cores instead
# of taking turns.  The report waits for both; either failing stops `make demo` with its own error.
demo: $(VENV)/.installed-core
	$(MAKE) -s --no-print-directory $(VENV)/.installed-app & extras=$$!; \
	$(BIN)/python scripts/warm_kernels.py; compiled=$$?; \
	wait $$extras && exit $$compiled
	$(BIN)/wargame-odds report reports/demo
	@echo "The point-and-click app: $(BIN)/wargame-odds app  (it opens in your browser; docs/app.md)"
	@echo "The demo report is reports/out/demo/index.html: open it in a browser" \
	      "(Linux: xdg-open reports/out/demo/index.html; macOS: open reports/out/demo/index.html)."

# `make test` first checks that the kernels give the recorded counts (docs/fingerprint.md), then lints the tree
# (ruff, configured in pyproject.toml; under a second), so a lint finding stops it before the suite starts.
# The suite runs on every core (pytest-xdist; the tests sharing a slow fixture go to one worker together,
# see SHARED_FIXTURE_MODULES in tests/conftest.py).  The kernels are compiled (or loaded from the cache)
# once before the workers start, so that they do not all compile the Epic kernel at once.  One worker per
# usable core, at most 4 (each worker holds the kernels and its data, about 1 GB).
TEST_WORKERS ?= $(shell $(PYTHON) -c "import os; print(min(4, len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count() or 1))")
test: $(VENV)/.installed-test
	$(BIN)/python scripts/warm_kernels.py
	$(BIN)/python -m benchmarks.fingerprint --check
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS)

# Every Epic scenario the project ships or tests, its kernels compiled with NUMBA_BOUNDSCHECK=1 into a fresh cache
# (scripts/check_bounds.py; the test suite runs its --subset).
check-bounds: $(VENV)/.installed-test
	$(BIN)/python scripts/check_bounds.py --fresh

# make bench: the kernels against their reference engines and the raw generator (run.py), the list search's race
# (benchmarks/list_search.py), then the speed guard's matrix of shapes against the committed baseline
# (benchmarks/guard.py, benchmarks/shapes.toml, baseline.json).
# make bench-compare REF=<commit>: the matrix of this checkout beside REF's, built in a temporary folder and run
# interleaved, one thread, PAIRS rounds (default 3); each shape's ratio and spread, SLOWER where beyond the noise.
bench: $(VENV)/.installed
	$(BIN)/python benchmarks/run.py
	$(BIN)/python -m benchmarks.list_search
	$(BIN)/python benchmarks/guard.py

bench-compare: $(VENV)/.installed
	@test -n "$(REF)" || { echo "error: make bench-compare needs REF=<commit> (e.g. REF=main)"; exit 2; }
	$(BIN)/python benchmarks/guard.py --ref $(REF) --pairs $(or $(PAIRS),3)

# Every shipped scenario on a kernel gives the same JSON with plain numba.njit (WARGAME_ODDS_PLAIN_NUMBA=1) as in the
# extended mode, each compiled into an empty cache (several minutes of CPU; docs/numba.md).  CI runs its --subset.
check-plain-numba: $(VENV)/.installed
	$(BIN)/python scripts/check_plain_numba.py

clean:
	rm -rf $(VENV) reports/out
