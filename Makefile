# Two commands do all set-up on a fresh machine:
#   make serve  - create the virtual environment if needed, run the demo ingest, then serve the
#                 REST API over it (prints the URL of the interactive docs)
#   make test   - the one check command: ruff, mypy, import-linter and the whole pytest suite
# `make demo` runs only the demo (ingest, tree, search, pack) and exits.
# `make dist` builds the wheel and sdist; `make package-check` installs the wheel in a fresh
# venv and runs the demo from it (CI runs it after `make test`).
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: serve demo test browser check lint typecheck imports pytest clean dist package-check

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# constraints.txt pins every version we test with (torch==2.13.0: the CPU build).
	$(BIN)/python -m pip install --quiet -c constraints.txt -e ".[dev]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/windowpack demo

# The demo fills the default store and collection (wp-store, default), the ones every
# command uses; later runs find it unchanged and start serving at once.
serve: $(STAMP)
	$(BIN)/windowpack demo
	$(BIN)/windowpack serve

test: $(STAMP) browser lint typecheck imports pytest

# The /ui page tests drive Debian's Chromium (playwright downloads no browser here): installed
# when missing, so that a fresh machine runs them too instead of skipping them.
browser:
	@command -v chromium > /dev/null || { apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		chromium > /dev/null; }

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks examples
	$(BIN)/ruff format --check src tests benchmarks examples

typecheck: $(STAMP)
	$(BIN)/mypy

imports: $(STAMP)
	$(BIN)/lint-imports

pytest: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

dist: $(STAMP)
	rm -rf dist
	$(BIN)/python -m build --sdist --wheel --outdir dist .

package-check: $(STAMP)
	bash .ci/package-check

clean:
	rm -rf $(VENV) wp-store dist build .pytest_cache .mypy_cache .ruff_cache
