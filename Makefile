# Two commands do all set-up on a fresh machine:
#   make serve  - create the virtual environment if needed with what serving needs (the core,
#                 the REST API, the MCP server and the client: no compiler runs), run the demo
#                 ingest, then serve the REST API over it (prints the URL of the interactive docs)
#   make test   - the one check command: adds everything else the suite needs (extra `dev`:
#                 llama.cpp compiled from source, Ray, Playwright, the linters...), then ruff,
#                 mypy, import-linter and the whole pytest suite (the fast tier on every core,
#                 then the slow tier in one process)
# `make test-fast` is the edit-test loop: ruff and every test not marked slow (tests/tiers.py
# marks live servers, subprocesses, Ray, Chromium, PostgreSQL, the real model...), on all cores.
# `make demo` runs only the demo (ingest, tree, search, pack) and exits.
# `make test-under-load` runs `make test` three times in a row beside two CPU-bound processes
# (benchmarks/under_load.py): the proof that the suite does not depend on the machine's speed.
# `make dist` builds the wheel and sdist; `make package-check` installs the wheel in a fresh
# venv and runs the demo from it (CI runs it after `make test`).
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
# Two install sets, each with its own stamp: serving's (extra `serve`) and the whole suite's
# (extra `dev`, which includes serving's). `make serve` never waits for the second.
SERVE_STAMP := $(VENV)/.serve-stamp
STAMP := $(VENV)/.installed-stamp
# pytest keeps the test modules it rewrites (and Python the modules it compiles) as bytecode
# for the next run; with bytecode writing off, every run rewrites ~700 modules again (10+ s).
unexport PYTHONDONTWRITEBYTECODE
# Workers of the fast tier (pytest-xdist): one per core.
FAST_WORKERS ?= auto

.PHONY: serve demo test test-fast test-under-load browser manuals check lint typecheck imports pytest clean dist package-check

# constraints.txt pins every version we test with (torch==2.13.0: the CPU build), for both sets.
# Serving's set is wheels only: nothing of it is compiled on install. --no-compile: pip would
# byte-compile all ~14K modules of the set (a minute of two loaded cores); Python compiles the
# few hundred a command imports on first use instead.
PIP_INSTALL := $(BIN)/python -m pip install --quiet --no-compile -c constraints.txt
$(SERVE_STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP_INSTALL) -e ".[serve]"
	touch $(SERVE_STAMP)

$(STAMP): $(SERVE_STAMP)
	$(PIP_INSTALL) -e ".[dev]"
	touch $(STAMP)

demo: $(SERVE_STAMP)
	$(BIN)/windowpack demo

# The demo fills the default store and collection (wp-store, default), the ones every
# command uses; later runs find it unchanged and start serving at once.
serve: $(SERVE_STAMP)
	$(BIN)/windowpack demo
	$(BIN)/windowpack serve

test: $(STAMP) browser manuals lint typecheck imports pytest

test-under-load: $(STAMP)
	$(BIN)/python benchmarks/under_load.py --hogs 2 --runs 3 -- $(MAKE) test

# Whole test files go to one worker, so that a module's fixtures are built once.
test-fast: $(STAMP) lint
	$(BIN)/python -m pytest -m "not slow" -q -n $(FAST_WORKERS) --dist loadfile $(PYTEST_ARGS)

# The /ui page tests drive Debian's Chromium (playwright downloads no browser here): installed
# when missing, so that a fresh machine runs them too instead of skipping them.
browser:
	@command -v chromium > /dev/null || { apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		chromium > /dev/null; }

# The real-document tests and the manual evals (examples/manuals) read manuals from Debian's
# packages (the corpora are not ours to ship): installed when missing, as the browser is.
# PostgreSQL's manual and the Debian handbook (its German and Chinese editions test the
# language seam) are read by tests; the others by `windowpack eval docs --manual`.
MANUAL_PACKAGES := postgresql-doc-15 debian-handbook python3.11-doc sqlite3-doc git-doc
manuals:
	@test -d /usr/share/doc/postgresql-doc-15/html -a -d /usr/share/doc/debian-handbook/html \
		-a -d /usr/share/doc/python3.11-doc/html -a -d /usr/share/doc/git-doc \
		-a -f /usr/share/doc/sqlite3/lang.html || { apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		$(MANUAL_PACKAGES) > /dev/null; }

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks examples
	$(BIN)/ruff format --check src tests benchmarks examples

typecheck: $(STAMP)
	$(BIN)/mypy

imports: $(STAMP)
	$(BIN)/lint-imports

# The whole suite in two passes: the fast tier on every core (each of its tests has its own
# temporary store and nothing else), then the slow tier in one process (live servers on ports,
# PostgreSQL's one test database, Ray, kill -9 rounds are not safe side by side). A pass that
# PYTEST_ARGS leaves without tests (pytest's exit 5) is not a failure.
pytest: $(STAMP)
	$(BIN)/python -m pytest -m "not slow" -n $(FAST_WORKERS) --dist loadfile $(PYTEST_ARGS) \
		|| test $$? -eq 5
	$(BIN)/python -m pytest -m slow $(PYTEST_ARGS) || test $$? -eq 5

dist: $(STAMP)
	rm -rf dist
	$(BIN)/python -m build --sdist --wheel --outdir dist .

package-check: $(STAMP)
	bash .ci/package-check

clean:
	rm -rf $(VENV) wp-store dist build .pytest_cache .mypy_cache .ruff_cache
