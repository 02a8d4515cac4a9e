"""Fixtures shared by the test modules.

- `server`, `make_client`: the scripted OpenAI-compatible server of fake_openai.py on 127.0.0.1,
  and ChatClients of it;
- `adapter_folder`, `simulate_workspace`: a LoRA adapter on the tiny model, and the repository root
  `kaser simulate` runs in (simulate_cli.py);
- `random_adapter`: a LoRA adapter whose weights change the model's outputs (the sampling engines);
- `grpo_workspace`: a repository root with the cluster outputs the GRPO stages need.

Plain helpers and data live in the named modules beside this file (fake_openai.py,
hike_problem.py, marker_dataset.py, simulate_cli.py, stage_runs.py, csv_files.py, tiny_lm.py).
"""

from __future__ import annotations

import json

import polars as pl
import pytest
import yaml

from kaser.predictor.base_model import load_model
from kaser.taxonomy import category_of
from fake_openai import KEY_ENV, SECRET, FakeOpenAI
from simulate_cli import PARAMS as SIMULATE_PARAMS
from stage_runs import ABLATE_PARAMS, make_workspace
from tiny_lm import tiny_model_folder

# ---------------------------------------------------------------- the fake OpenAI server

@pytest.fixture
def server():
    """The scripted OpenAI-compatible server of fake_openai.py, started for one test."""
    fake = FakeOpenAI()
    fake.thread.start()
    yield fake
    fake.httpd.shutdown()
    fake.httpd.server_close()


@pytest.fixture
def make_client(server, tmp_path, monkeypatch):
    """make(**overrides) -> a ChatClient of `server` (quick retries, a cache in tmp_path); the key
    is set in KEY_ENV, and every client made is closed after the test."""
    from kaser.llm import ChatClient   # imported here: openai is slow to import
    from llm_settings import llm_settings

    monkeypatch.setenv(KEY_ENV, SECRET)
    clients = []

    def make(**overrides) -> ChatClient:
        settings = dict(base_url=server.url, api_key_env=KEY_ENV, backoff_s=0.001,
                        max_concurrency=4, max_retries=3, malformed_retries=2)
        client = ChatClient(*llm_settings(**{**settings, **overrides}), tmp_path / "llm_cache.sqlite",
                            progress=False)
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


# ---------------------------------------------------------------- kaser simulate

@pytest.fixture(scope="module")
def adapter_folder(tmp_path_factory):
    """A LoRA adapter on the tiny model, as the grpo stage leaves it."""
    from peft import LoraConfig, get_peft_model
    model, _ = load_model(tiny_model_folder(), dtype="float32", trainable=True)
    peft_model = get_peft_model(model, LoraConfig(r=2, lora_alpha=4, target_modules=["q_proj"],
                                                  task_type="CAUSAL_LM"))
    folder = tmp_path_factory.mktemp("grpo")
    peft_model.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def random_adapter(tmp_path_factory):
    """A LoRA adapter on the tiny model with non-zero weights (init_lora_weights=False), so that
    merging it changes what the model writes: what the sampling engines must merge."""
    import torch
    from peft import LoraConfig, get_peft_model

    model, _ = load_model(tiny_model_folder(), dtype="float32")
    torch.manual_seed(1)
    peft = get_peft_model(model, LoraConfig(r=4, lora_alpha=32, target_modules=["q_proj", "v_proj", "down_proj"],
                                            init_lora_weights=False))
    folder = tmp_path_factory.mktemp("adapter")
    peft.save_pretrained(folder)
    return folder


@pytest.fixture
def simulate_workspace(tmp_path, monkeypatch, adapter_folder):
    """The current directory as the repository root `kaser simulate` reads: params.yaml
    (simulate_cli.PARAMS), models/base, models/toy/grpo/student-0 (the first run's adapter),
    data/toy (problems, mastery)."""
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(SIMULATE_PARAMS))
    (tmp_path / "models" / "toy" / "grpo").mkdir(parents=True)
    (tmp_path / "models" / "base").symlink_to(tiny_model_folder())
    (tmp_path / "models" / "toy" / "grpo" / "student-0").symlink_to(adapter_folder)
    data = tmp_path / "data" / "toy"
    data.mkdir(parents=True)
    pl.DataFrame({"problem_id": ["p1", "p2"], "kcs": [["loops", "lists"], ["arithmetic"]]}
                 ).write_parquet(data / "problems.parquet")
    # vocabulary order: arithmetic, lists, loops
    pl.DataFrame({"student_id": ["s1", "s2", "s3"], "problem_id": ["p1"] * 3, "step": [0, 0, 0],
                  "fold": [0, 1, 2], "mastery": [[0.1, 0.2, 0.3], [0.5, 0.6, 0.7], [0.9, 0.8, 0.95]]}
                 ).write_parquet(data / "mastery.parquet")
    monkeypatch.chdir(tmp_path)
    return tmp_path


# ---------------------------------------------------------------- the GRPO stages

@pytest.fixture
def grpo_workspace(tmp_path, monkeypatch):
    """The current directory as a repository root (stage_runs.make_workspace with ABLATE_PARAMS)
    with the cluster outputs GRPO needs, whose labels are the true errors."""
    from kaser.errors.cluster import problem_error_lists   # imported here: scikit-learn is slow

    root = make_workspace(tmp_path, ABLATE_PARAMS)
    data = root / "data" / "toy"
    submissions = pl.read_parquet(data / "submissions.parquet")
    errors = submissions.select("student_id", "problem_id", errors=pl.col("true_errors"))
    errors.write_parquet(data / "submission_errors.parquet")
    labels = sorted({label for row in errors["errors"] for label in row})
    pl.DataFrame({"category": [category_of(label, "python") for label in labels], "label": labels,
                  "count": [1] * len(labels), "cluster": list(range(len(labels))),
                  "cluster_label": labels}).write_parquet(data / "error_labels.parquet")
    (data / "problem_errors.json").write_text(json.dumps(problem_error_lists(errors, 10)))
    monkeypatch.chdir(root)
    return root
