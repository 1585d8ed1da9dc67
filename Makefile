# Affidavit: two promises, `make demo` and `make test`, each working on a fresh machine.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PY     := $(BIN)/python
STAMP_RUNTIME := $(VENV)/.installed-runtime
STAMP_DEV     := $(VENV)/.installed-dev
# Byte-compile the installed tree once, so short commands start fast even where the environment
# sets PYTHONDONTWRITEBYTECODE (Python still reads compiled files; it only stops writing them).
COMPILE := $(PY) -m compileall -q build/__editable__.affidavit-* >/dev/null
# A quiet install: setuptools' notice that a strict editable install was made (it is, on purpose)
# is relayed by pip as a warning on every run; nothing else is silenced.
PIP := PYTHONWARNINGS="ignore:Editable installation" flock /tmp/affidavit-pip.lock $(PY) -m pip

.PHONY: demo test lint typecheck pytest install install-dev bench vectors wheel-test docs clean mutation

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip setuptools wheel

$(STAMP_RUNTIME): pyproject.toml | $(PY)
	$(PIP) install --quiet -e '.[registry]' --config-settings editable_mode=strict
	touch $@

ORACLES := build/oracles/.downloaded

$(STAMP_DEV): pyproject.toml | $(PY)
	$(PIP) install --quiet -e '.[dev]' --config-settings editable_mode=strict
	touch $@ $(STAMP_RUNTIME)

# Oracles used as files (tests/oracles.txt): downloaded by hash, never installed.
$(ORACLES): tests/oracles.txt | $(PY)
	mkdir -p build/oracles
	$(PIP) download --quiet --no-deps --require-hashes -r tests/oracles.txt -d build/oracles
	touch $@

# A strict editable install sees new files only after it is re-run: refresh it (fast, no deps).
install: $(STAMP_RUNTIME)
	@$(PIP) install --quiet --no-deps --no-build-isolation -e . --config-settings editable_mode=strict
	@$(COMPILE)

install-dev: $(STAMP_DEV) $(ORACLES)
	@$(PIP) install --quiet --no-deps --no-build-isolation -e . --config-settings editable_mode=strict
	@$(COMPILE)

demo: install
	@PATH="$(CURDIR)/$(BIN):$$PATH" bash demo/run.sh

lint: install-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: install-dev
	$(BIN)/mypy --strict -p affidavit.verify -p affidavit.attest -p affidavit.cli -p affidavit.registry -p affidavit.witness -p affidavit.specs
	cd tools && ../$(BIN)/mypy --strict docs_reference.py docs_hooks.py docs_run.py docs_stigmem_node.py mutation.py

# The coverage table goes to build/coverage.txt; the terminal gets its total in one line, and the
# 20 slowest tests (slow property sweeps take their full budgets under CI=true: tests/budget.py).
pytest: install-dev
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m pytest --cov --cov-branch --cov-report= --durations=20 $(PYTEST_ARGS)
	@mkdir -p build
	@$(BIN)/coverage report > build/coverage.txt
	@echo "coverage: $$($(BIN)/coverage report --format=total)% (lines and branches; the table: build/coverage.txt)"

test: lint typecheck pytest

vectors: install-dev
	UPDATE_GOLDENS=1 $(PY) -m pytest -q tests -k golden

# Mutation testing of the modules that decide a verdict (issue 36; docs/testing.md), never part of
# `make test`: mutmut 3 in a staging tree (tools/mutation.py), the scope in pyproject.toml
# ([tool.affidavit.mutation.scope]). MUTATE=verify/crypto/merkle.py runs one module; one worker
# unless MUTATION_CHILDREN says more. Prints the score per module and the survivors. The
# explorer's JavaScript (MUTATE=registry/explorer/explorer.js) runs under StrykerJS, pinned in
# tools/stryker (npm ci there on first use), judged by tests/registry/explorer_js.
mutation: install-dev
	PATH="$(CURDIR)/$(BIN):$$PATH" $(PY) tools/mutation.py $(MUTATE)

# The documentation site: MkDocs Material, --strict (a warning fails the build). The CLI reference
# and the error-code pages are generated from the click commands and specs/error-codes.json.
docs: install-dev
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet --site-dir build/site
	@echo "docs ok: build/site/index.html"

bench: install-dev
	@PATH="$(CURDIR)/$(BIN):$$PATH" bash bench/run.sh

# CI also checks the built wheel: installed (not editable) in a clean venv, it must import and
# run the whole demo (entry point, package data, schemas, built-in contracts).
wheel-test: install-dev
	rm -rf build/wheel-venv dist
	$(PY) -m pip wheel --quiet --no-deps -w dist .
	$(PYTHON) -m venv build/wheel-venv
	build/wheel-venv/bin/pip install --quiet "$$(ls dist/affidavit-*.whl)[registry]"
	build/wheel-venv/bin/python -c "import affidavit.verify, affidavit.cli.main; print('wheel imports ok')"
	PATH="$(CURDIR)/build/wheel-venv/bin:$$PATH" bash demo/run.sh > build/wheel-demo.log
	@echo "wheel demo ok (log: build/wheel-demo.log)"

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache .coverage
