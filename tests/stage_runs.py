"""Running DVC stage scripts in a test: a small repository root (params.yaml for the tiny model,
models/base, a synthetic dataset with folds and a flat mastery table) and the stages/ modules."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import polars as pl
import yaml

from tiny_lm import tiny_model_folder

REPO = Path(__file__).resolve().parent.parent

STAGE_PARAMS = {
    "model": {"base": "tiny", "dtype": "float32", "folds": [0], "splits": ["student"]},
    "generate": {"backend": "transformers", "k": 2, "temperature": 0.7, "top_k": 40, "top_p": 1.0,
                 "repetition_penalty": 1.1, "max_new_tokens": 6, "batch_size": 4, "max_pairs": 3,
                 "seed": 0},
    "sft": {"lora_r": 4, "lora_alpha": 8, "lora_dropout": 0.0,
            "target_modules": ["q_proj", "k_proj", "v_proj", "o_proj"], "learning_rate": 1.0e-2,
            "epochs": 1, "batch_size": 2, "gradient_accumulation_steps": 1, "max_length": 512,
            "max_pairs": 4, "gradient_checkpointing": False, "seed": 0},
    "baselines": {"backend": "local", "history": 2, "persona_history": 2, "max_code_chars": 80,
                  "persona_max_new_tokens": 6, "openai_model": None, "openai_base_url": None,
                  "openai_temperature": 0.7, "parastudent_max_pairs": 2, "parastudent_max_length": 768},
    "llm": {"model": "o4-mini"},
}

# STAGE_PARAMS for a tiny GRPO run (two prompts, two generations, six tokens) judged by the
# static judge, ablating the error reward
ABLATE_PARAMS = STAGE_PARAMS | {
    "grpo": {"num_generations": 2, "prompts_per_step": 2, "learning_rate": 1.0e-3,
             "max_completion_length": 6, "reward_weights": [1.0, 1.0, 1.0], "max_pairs": 2,
             "seed": 0},
    "judge": {"backend": "static"},
    "annotate": {"case_timeout_s": 0.5},
    "ablations": {"rewards": ["error"]},
}


def cpu_study():
    """studies/cpu_study.py as a module (studies/ is not a package): `make study`'s settings."""
    spec = importlib.util.spec_from_file_location("cpu_study", REPO / "studies" / "cpu_study.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def study_set(config: Path = REPO / "configs" / "study.yaml") -> list[str]:
    """The `key=value` settings of configs/study.yaml (`make study`), as `dvc exp run -S` gets them."""
    study = cpu_study()
    return study.settings(study.load(config))


def commented_dataset(name: str) -> dict:
    """The dataset entry `name` that params.yaml documents but leaves commented out of the
    default (`  # name:` and its `  #   key: value` lines), as YAML."""
    lines = (REPO / "params.yaml").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line == f"  # {name}:")
    block = [lines[start][4:]]
    for line in lines[start + 1:]:
        if not line.startswith("  #   "):
            break
        block.append(line[4:])
    return yaml.safe_load("\n".join(block))[name]


def set_values(words: list[str]) -> list[str]:
    """The `key=value` after each `-S` of a command's words, in order."""
    return [words[i + 1] for i, word in enumerate(words) if word == "-S"]


def full_params(overrides: dict) -> dict:
    """The repository's params.yaml with `overrides` laid over it section by section: a stage
    reads every field of its settings from the file, so a test names only what it changes."""
    params = yaml.safe_load((REPO / "params.yaml").read_text())
    for section, values in overrides.items():
        if isinstance(values, dict) and isinstance(params.get(section), dict):
            params[section] = params[section] | values
        else:
            params[section] = values
    return params


def make_workspace(root: Path, params: dict = STAGE_PARAMS) -> Path:
    """`root` as a repository root: params.yaml (the repository's with `params` over it),
    models/base (tiny), data/toy (10 students x 3 Python problems, 2 folds, mastery 0.5
    everywhere). Returns root."""
    from kaser.data.contracts import kc_vocabulary, make_folds, write_dataset, write_folds
    from kaser.data.synth import generate

    (root / "params.yaml").write_text(yaml.safe_dump(full_params(params)))
    (root / "models").mkdir()
    (root / "models" / "base").symlink_to(tiny_model_folder())
    data = root / "data" / "toy"
    problems, submissions = generate("python", students=10, problems=3, seed=4)
    write_dataset(data, problems, submissions)
    write_folds(data / "folds.json", make_folds(submissions, 2, seed=0))
    size = len(kc_vocabulary(problems))
    submissions.select("student_id", "problem_id").with_columns(
        mastery=pl.lit([0.5] * size, dtype=pl.List(pl.Float64))).write_parquet(data / "mastery.parquet")
    return root


def stage(name: str):
    """The module of stages/<name>.py (stages/ is not a package; its scripts import their shared
    modules _runner and _judge from their own folder, as `python stages/<name>.py` does)."""
    if str(REPO / "stages") not in sys.path:
        sys.path.insert(0, str(REPO / "stages"))
    spec = importlib.util.spec_from_file_location(f"stage_{name}", REPO / "stages" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module   # dataclasses of a stage with postponed annotations look it up
    spec.loader.exec_module(module)
    return module
