# citelab — the two commands a newcomer needs are `make demo` and `make test`.
# Each does all of its own set-up on a fresh machine (Python 3.11+, Node 20+, root for apt).
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
RUN_STAMP := $(VENV)/.installed-run
LINT_PATHS := src tests benchmarks fixtures notebooks/_build.py notebooks/*.ipynb

.PHONY: install demo test test-quick test-py test-py-main test-browser test-js js-install js js-check chromium lint typecheck bench lab clean

# `make demo` needs only citelab itself; the tests need the dev extras as well (PyTorch for the
# NLI judge's tests, Ray, Playwright, the linters), which the demo should not wait for.
$(RUN_STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(STAMP): $(RUN_STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

install: $(STAMP)

# The main job: the bundled evaluation suite on the offline model, writing
# evaluations/reports/default/ (report.html, CSV tables, run.json).
demo: $(RUN_STAMP)
	$(BIN)/citelab eval --suite default

# ruff, then the import contract in pyproject.toml (layers in the order of the data flow, no
# cycles, no private module imported from outside its package).
lint: $(STAMP)
	$(BIN)/ruff check $(LINT_PATHS)
	$(BIN)/ruff format --check $(LINT_PATHS)
	$(BIN)/lint-imports

typecheck: $(STAMP)
	$(BIN)/mypy

# Front end: TypeScript checks the JSDoc types, vitest unit tests, and the committed bundle
# must equal a fresh build of js/.
test-js: js-install
	bash scripts/js.sh types
	bash scripts/js.sh test
	bash scripts/js.sh check

js:
	bash scripts/js.sh build

# Debian's chromium for the real-browser tests (Playwright drives it by executable_path).
chromium:
	bash scripts/ensure-chromium.sh

# pytest-xdist spreads the Python tests over the cores (PYTEST_WORKERS=1 for one process);
# every test that uses the browser or JupyterLab is in the xdist group "browser", which
# --dist loadgroup keeps in one worker: chromium and JupyterLab start once per run.
# (pyproject.toml's addopts print the 20 slowest tests at the end of every run.)
PYTEST_WORKERS ?= auto
XDIST := -n $(PYTEST_WORKERS) --dist loadgroup
QUICK := not browser and not notebook and not slow

# make test runs the Python tests in two parts side by side: all but the browser tests under
# xdist (the xdist groups keep each expensive fixture in one worker), and the browser tests in
# a process of their own (Playwright's sync API keeps its event loop as the thread's running
# loop while the session's browser is open, so no other test may run after them there).
PYTEST_FULL_WORKERS ?= auto

test-py: test-py-main test-browser

# The front end's packages (npm ci when package-lock.json changed): some Python tests run the
# front end, and two xdist workers must not both install them.
js-install:
	bash scripts/js.sh install

test-py-main: $(STAMP) js-install
	sh scripts/pytest.sh $(BIN)/python -n $(PYTEST_FULL_WORKERS) --dist loadgroup -m "not browser"

# Only tests/browser is collected: its conftest holds the browser and JupyterLab fixtures, so
# no test elsewhere can use them.
test-browser: $(STAMP) chromium js-install
	sh scripts/pytest.sh $(BIN)/python -n 0 -m browser tests/browser

# Four parts side by side, each printing its output when it ends: the Python tests but the
# browser ones (xdist, every core), the browser tests in their own process (they mostly wait
# on chromium and JupyterLab, so they fill the cores' idle time instead of running after the
# rest), the type check and the JS tests.
test: lint
	$(MAKE) --no-print-directory -j4 --output-sync=target test-py-main test-browser typecheck test-js

# The edit loop: the Python tests but the browser, notebook and slow ones (markers come from
# the fixtures a test uses, see tests/conftest.py); no lint, types or JS. `make test` runs all.
test-quick: $(STAMP) js-install
	sh scripts/pytest.sh $(BIN)/python $(XDIST) -m "$(QUICK)"

bench: $(STAMP)
	for f in benchmarks/bench_*.py; do $(BIN)/python $$f --quick || exit 1; done

lab: $(STAMP)
	$(BIN)/jupyter lab notebooks

clean:
	rm -rf $(VENV) node_modules .pytest_cache .mypy_cache .ruff_cache .import_linter_cache .grimp_cache
