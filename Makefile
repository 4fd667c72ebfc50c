# Two commands set everything up (see README):
#   make explore   virtual environment + fpexplore[jupyter], then JupyterLab on the explorer
#   make test      virtual environment + fpexplore[jupyter,dev], then the whole test suite
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# the port to serve on: `make explore PORT=8890`, `make dashboard PORT=8867`; empty: JupyterLab's
# 8888 (or the next free port) and Voila's 8866
PORT ?=
PORT_ARG = $(if $(strip $(PORT)),--port=$(strip $(PORT)),)
# more arguments for JupyterLab (`make explore JUPYTER_ARGS="--no-browser"`) and for Voila
JUPYTER_ARGS ?=
VOILA_ARGS ?=
# JupyterLab refuses to run as root without --allow-root (containers, CI): given as root,
# whatever JUPYTER_ARGS says
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root,)

.PHONY: explore dashboard test test-gmpy2 lint bench clean

explore: $(VENV)/.installed-jupyter $(VENV)/.warm
	$(BIN)/jupyter lab notebooks/00_explorer.ipynb $(ALLOW_ROOT) $(PORT_ARG) $(JUPYTER_ARGS)

# the explorer's first views compiled once, as binder/postBuild does for every op: a newcomer's
# first `make explore` opens on a warm cache (numba's, beside the sources)
$(VENV)/.warm: $(VENV)/.installed-jupyter
	$(BIN)/python -m fpexplore.warmup --formats float32 --ops sum,dot,matmul --quiet
	touch $@

# the explorer as a dashboard (Voila: no code cells, just the app), set up by dashboard/voila.py:
# nothing loaded from another machine, a page's kernel shut down when the page closes, idle
# kernels culled (tests/test_dashboard.py runs this command line); http://localhost:8866/ unless
# PORT says otherwise
dashboard: $(VENV)/.installed-jupyter
	JUPYTER_PATH=$(CURDIR)/dashboard $(BIN)/voila notebooks/00_explorer.ipynb --Voila.config_file_paths=$(CURDIR)/dashboard $(PORT_ARG) $(VOILA_ARGS)

test: $(VENV)/.installed-dev
	FPX_MIN_ORACLE_CASES=100000 $(BIN)/python -m pytest

# the oracle tests once more where mpmath computes with gmpy2 (as in conda environments that
# ship sympy): a small separate environment, so that `make test` keeps mpmath's own backend
GMPY2_VENV ?= .venv-gmpy2
test-gmpy2:
	$(PYTHON) -m venv $(GMPY2_VENV)
	$(GMPY2_VENV)/bin/python -m pip install --quiet -e . "pytest>=8" "hypothesis>=6.100" gmpy2
	FPX_EXPECT_MPMATH_BACKEND=gmpy $(GMPY2_VENV)/bin/python -m pytest -q -p no:cacheprovider \
		tests/test_ops_elementwise.py tests/test_ops_stats.py tests/test_ops_ml.py tests/test_exact.py

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check .

bench: $(VENV)/.installed-dev
	$(BIN)/python benchmarks/bench_exact.py
	$(BIN)/python benchmarks/bench_orders.py
	$(BIN)/python benchmarks/bench_explorer.py
	$(BIN)/python benchmarks/bench_startup.py
	$(BIN)/python benchmarks/bench_matmul.py
	$(BIN)/python benchmarks/bench_explain.py

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else "fpexplore needs Python 3.10 or newer (found " + sys.version.split()[0] + "); set PYTHON=python3.x")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed-jupyter: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[jupyter]"
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[jupyter,dev]"
	touch $@ $(VENV)/.installed-jupyter

clean:
	rm -rf $(VENV) $(GMPY2_VENV) .pytest_cache .hypothesis .ruff_cache *.egg-info
