#!/usr/bin/env bash
# Run benchmarks/gpu_check.py on a GPU machine that can install nothing: first unpack the packages
# it lacks from a carry folder into /tmp/site. Run from the folder that holds the carry folder:
#
#     bash <carry>/benchmarks/gpu_check.sh <carry> <out dir> [gpu_check.py options]
#     bash <carry>/benchmarks/gpu_check.sh <carry> <out dir> --smoke    # seconds on the GPU
#
# The carry folder (.gpucheck, see the "GPU check" notes in benchmarks/gpu_check.py) holds
# whl/*.whl (cp312 manylinux wheels: trl, datasets, dill, multiprocess, polars, codebleu,
# tree-sitter + grammars, peft), transformers-<v>-site.tar.xz (the installed package, xz: the wheel
# is too big), polars_runtime/ (polars' runtime with its .so stripped and xz-packed, for the same
# reason), tokenizer/ (SmolLM2's, tokenizer.json.xz), data/ (a synthetic Python dataset), kaser/,
# benchmarks/ and tests/tiny_lm.py.
#
# Building the carry folder (here, in the checkout the device tool sends; name it in .git/info/exclude
# and in `carry`; the working tree + carry must stay under 64 MiB, this one is ~40 MiB):
#   pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#       --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform any -d whl \
#       trl==1.16.0 datasets==5.2.0 dill==0.4.1 multiprocess==0.70.19 polars==2.1.0 \
#       polars-runtime-32==2.1.0 codebleu==0.7.0 tree-sitter==0.22.3 tree-sitter-java==0.21.0 \
#       tree-sitter-python==0.21.0 peft==0.21.2 transformers==5.24.0
#   then install transformers and polars-runtime-32 with `pip install --no-deps --target site ...`,
#   `tar -cJf transformers-5.24.0-site.tar.xz -C site transformers transformers-5.24.0.dist-info`
#   (13.5 MB wheel -> 4.6 MB), `strip --strip-unneeded` the runtime's .so and xz it (54 MB wheel ->
#   31 MB), put _polars_runtime_32/ + its dist-info under polars_runtime/, and drop both wheels.
# The machine's own transformers (5.17 when seen) does not do: TrainingArguments there has no
# `activation_checkpointing`, which our SFT/GRPO configs pass (TRL 1.16 + transformers 5.24 do).
set -o pipefail
CARRY=${1:-.gpucheck}; OUT=${2:-/tmp/gpu-check-out}; shift 2
SITE=/tmp/site
mkdir -p "$SITE" "$OUT"
start=$(date +%s)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$SITE" "$CARRY"/whl/*.whl || exit 3
python3 - "$CARRY" "$SITE" <<'EOF' || exit 3
import lzma, shutil, sys, tarfile
from pathlib import Path
carry, site = map(Path, sys.argv[1:])
for archive in carry.glob("*-site.tar.xz"):
    with tarfile.open(archive) as tar:
        tar.extractall(site, filter="data")
for item in (carry / "polars_runtime").iterdir():
    shutil.rmtree(site / item.name, ignore_errors=True)
    shutil.copytree(item, site / item.name)
for packed in [*site.glob("_polars_runtime_32/*.xz"), *(carry / "tokenizer").glob("*.xz")]:
    packed.with_suffix("").write_bytes(lzma.decompress(packed.read_bytes()))
    packed.unlink()
EOF
echo "packages unpacked in $(( $(date +%s) - start )) s"
export PYTHONPATH=$SITE PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>&1
cd "$CARRY" && python3 benchmarks/gpu_check.py --tokenizer tokenizer --data data \
    --out "$OUT/gpu_check.json" "$@" 2>&1 | tee "$OUT/gpu_check.log"
