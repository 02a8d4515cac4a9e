"""Where does a sampled code end? Student SFT trained twice on the same pairs, once with each
reply ending right after the code's last token (`stripped`) and once ending in one line break
(`newline`, what the pipeline trains: kaser.predictor.sft.student_reply), then both sampled on
the same held-out pairs with the same seed.

    python benchmarks/code_endings.py                              # params.yaml sft: 192 pairs (~23 min)
    python benchmarks/code_endings.py --pairs 400 -S sft.learning_rate=2e-4 --out endings.json
    python benchmarks/code_endings.py --pairs 192 --endings newline  # the pipeline's ending alone
    python benchmarks/code_endings.py --test-pairs 300 --adapter sft=models/synthetic-python/sft/student-0
    python benchmarks/code_endings.py --smoke                      # seconds: tiny random model

Needs `dvc repro knowledge@<dataset>` (the pairs and their mastery) and models/base. Training
uses params.yaml `sft` (each `-S sft.key=value` laid over it; `--pairs` is its max_pairs), on
the training pairs of the first run of params.yaml `model`; sampling uses params.yaml `generate`
(its temperature, budget, redraws and seed; each `-S generate.key=value` laid over it) with
`--k` samples per pair on `--test-pairs` test pairs drawn with `--seed`. With `--adapter
NAME=PATH` (repeatable; not with `--endings`) it trains nothing and samples those adapters
instead, e.g. the pipeline's Student SFT (`models/<dataset>/sft/<split>-<fold>`) and KASER
(`.../grpo/...`): the same figures for the adapters `evaluate` samples, on more pairs.

Per ending it prints, over its samples, the share without a `return` (beside the real first
submissions of the same pairs), the share that parses (tree-sitter, no error node) and the share
the budget cut off, each with a 95% t interval over pairs; then the paired difference newline -
stripped per pair. A code without `return` is what a student who forgets to hand the result
back writes, and also what a model writes when it ends its reply one line too early; the real
share beside it says how often students do it on these pairs. Last line:
`newline_no_return_minus_real_points: X` (with `--endings stripped`, `stripped_...`; with
`--adapter`, the last adapter's NAME). One seed and one draw of pairs: it cannot tell the
spread between training runs.
"""

from __future__ import annotations

import argparse
import atexit
import dataclasses
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kaser.config import load_settings  # noqa: E402
from kaser.evaluation.scoring import RETURN  # noqa: E402

from _overrides import overrides  # noqa: E402  (benchmarks/, the script's own folder)

ENDINGS = {"stripped": "", "newline": "\n"}


def log(line: str) -> None:
    print(line, flush=True)


def interval(values: list[float]) -> tuple[float, float, float]:
    """(mean, low, high): the mean with its 95% t interval (nan bounds with fewer than 2 values)."""
    from kaser.evaluation.summary import t_interval
    low, high = t_interval(values) or (float("nan"), float("nan"))
    return statistics.fmean(values), low, high


def share_text(name: str, values: list[float]) -> str:
    mean, low, high = interval(values)
    return f"{name} {100 * mean:.1f}% [{100 * low:.1f}, {100 * high:.1f}]"


def sample_shares(codes_per_pair, truncated_per_pair, language: str) -> dict[str, list[float]]:
    """Per pair: the share of its samples without `return`, that parse, that were cut off."""
    from kaser.code.syntax import parse
    return {
        "no_return": [statistics.fmean(not RETURN.search(c) for c in codes) for codes in codes_per_pair],
        "parses": [statistics.fmean(not parse(c, language).has_error for c in codes)
                   for codes in codes_per_pair],
        "truncated": [statistics.fmean(bool(t) for t in cut) for cut in truncated_per_pair],
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", default="synthetic-python")
    parser.add_argument("--pairs", type=int, default=None,
                        help="training pairs (sft.max_pairs; default params.yaml's)")
    parser.add_argument("--test-pairs", type=int, default=100, help="held-out pairs sampled")
    parser.add_argument("--k", type=int, default=5, help="samples per held-out pair")
    parser.add_argument("--seed", type=int, default=7, help="draw of the held-out pairs")
    parser.add_argument("-S", dest="settings", action="append", default=[],
                        help="sft.<key>=<value> or generate.<key>=<value> over params.yaml (repeatable)")
    parser.add_argument("--endings", default=None,
                        help="comma-separated endings to train (default both; the paired "
                             "difference needs both); not with --adapter")
    parser.add_argument("--adapter", dest="adapters", action="append", default=[],
                        help="NAME=PATH: sample this trained adapter instead of training (repeatable)")
    parser.add_argument("--out", default=None, help="write the figures and codes as JSON here")
    parser.add_argument("--smoke", action="store_true", help="tiny random model, 2 pairs (seconds)")
    args = parser.parse_args(argv)
    if args.endings is not None and args.adapters:
        raise SystemExit("code_endings.py: --endings trains adapters and --adapter samples given "
                         "ones: give one of them")
    adapters = {}
    for given in args.adapters:
        name, sep, path = given.partition("=")
        if not sep or not name or not (Path(path) / "adapter_config.json").exists():
            raise SystemExit(f"code_endings.py: --adapter {given!r}: give NAME=PATH of a trained "
                             "adapter (a folder with adapter_config.json)")
        adapters[name] = Path(path)
    endings = {}
    if not adapters:
        named = set(ENDINGS) if args.endings is None else set(args.endings.split(","))
        endings = {name: ending for name, ending in ENDINGS.items() if name in named}
        if named - set(ENDINGS) or not endings:
            raise SystemExit(f"code_endings.py: --endings {args.endings!r}: give some of {', '.join(ENDINGS)}")

    import polars as pl
    from transformers import AutoTokenizer

    from kaser import config
    from kaser.predictor import sampling
    from kaser.predictor.prompt import pair_messages, read_pairs
    from kaser.predictor.rewards import completion_code
    from kaser.predictor.sft import SftParams, sample_pairs, sft_examples, train_examples

    changes = overrides("code_endings.py", args.settings, ("sft", "generate"))
    changes["generate"].setdefault("k", args.k)
    if args.pairs is not None:
        changes["sft"]["max_pairs"] = args.pairs
    sft = config.settings(SftParams, "sft", **changes["sft"])
    generate = config.settings(sampling.GenerateParams, "generate", **changes["generate"])
    work = Path(tempfile.mkdtemp(prefix="code-endings-"))   # the two adapters; removed at exit
    atexit.register(shutil.rmtree, work, ignore_errors=True)
    start = time.perf_counter()

    if args.smoke:
        sys.path.insert(0, str(ROOT / "tests"))
        from tiny_lm import tiny_model_folder
        base, dtype = Path(tiny_model_folder()), "float32"
        statement = "Return the sum of a and b."
        pairs = pl.DataFrame({"student_id": ["s1", "s2"], "problem_id": ["p"] * 2, "step": [0, 0],
                              "language": ["python"] * 2, "statement": [statement] * 2,
                              "signature": ["def add(a, b)"] * 2, "kcs": [["arithmetic"]] * 2,
                              "mastery": [[0.2], [0.9]],
                              "code": ["def add(a, b):\n    return a + b", "def add(a, b):\n    a + b"]})
        train, test = pairs, pairs
        sft = dataclasses.replace(sft, max_pairs=2, batch_size=2)
        generate = dataclasses.replace(generate, max_new_tokens=8)
        log("smoke run: tiny random model; the figures mean nothing")
    else:
        model = load_settings((ROOT / "params.yaml").read_text())["model"]
        split, fold = model["splits"][0], model["folds"][0]
        base, folder, dtype = ROOT / "models" / "base", ROOT / "data" / args.dataset, "auto"
        missing = [str(p.relative_to(ROOT)) for p in (base / "config.json", folder / "mastery.parquet")
                   if not p.exists()]
        if missing:
            raise SystemExit(f"code_endings.py: {', '.join(missing)} not found; run "
                             f"`dvc repro knowledge@{args.dataset}` first")
        train = read_pairs(folder, split, fold, "train")
        test = read_pairs(folder, split, fold, "test")
    chosen = sample_pairs(train, sft.max_pairs, sft.seed) if endings else None   # adapters: none trained
    held_out = test.sample(n=min(args.test_pairs, test.height), seed=args.seed, shuffle=False)
    language = held_out["language"][0]
    tokenizer = AutoTokenizer.from_pretrained(str(base))
    prompts = [tokenizer.apply_chat_template(m, tokenize=False, add_generation_prompt=True)
               for m in pair_messages(held_out)]
    if not args.smoke:
        submissions = pl.read_parquet(ROOT / "data" / args.dataset / "submissions.parquet")
        generate = sampling.resolve_budget(generate, tokenizer, submissions)
    real_codes = held_out["code"].to_list()
    real_no_return = [float(not RETURN.search(c)) for c in real_codes]
    trains = (f"{chosen.height} training pairs (lr {sft.learning_rate:g}, {sft.epochs:g} epoch)"
              if endings else "adapters " + ", ".join(f"{n} {p}" for n, p in adapters.items()))
    log(f"{trains}, {held_out.height} held-out pairs x K={generate.k}, budget {generate.max_new_tokens} tokens; "
        + share_text("real first submissions: no return", real_no_return))

    figures: dict[str, dict] = {"real_no_return": real_no_return}
    for name in [*endings, *adapters]:
        adapter = adapters.get(name, work / name)
        began = time.perf_counter()
        if name in endings:
            train_examples(str(base), sft_examples(chosen, endings[name]), sft, adapter, dtype)
        trained = time.perf_counter() - began
        drawn = sampling.sample_completions(str(base), str(adapter), prompts, generate, dtype)
        codes = [[completion_code(c) for c in own] for own in drawn]
        shares = sample_shares(codes, [[c.truncated for c in own] for own in drawn], language)
        figures[name] = shares | {"codes": codes, "train_s": trained,
                                  "sample_s": time.perf_counter() - began - trained}
        log(f"{name}: " + ", ".join(share_text(key, values) for key, values in shares.items())
            + f" ({trained:.0f} s training, {figures[name]['sample_s']:.0f} s sampling)")

    if len(endings) == len(ENDINGS):   # the paired difference needs both
        for key in ("no_return", "parses"):
            gaps = [b - a for a, b in zip(figures["stripped"][key], figures["newline"][key])]
            mean, low, high = interval(gaps)
            log(f"newline - stripped, {key}: {100 * mean:+.1f} points [{100 * low:+.1f}, "
                f"{100 * high:+.1f}] (paired over {len(gaps)} pairs)")
    if args.out:
        Path(args.out).write_text(json.dumps(figures, indent=1))
    log(f"total {time.perf_counter() - start:.0f} s")
    last = [*endings, *adapters][-1]
    gap = statistics.fmean(figures[last]["no_return"]) - statistics.fmean(real_no_return)
    log(f"{last}_no_return_minus_real_points: {100 * gap:+.1f}")


if __name__ == "__main__":
    main()
