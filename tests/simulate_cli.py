"""`kaser simulate` on a toy repository root (the `simulate_workspace` fixture of conftest.py):
the params.yaml that root holds, a problem statement, and `run`, which calls the command on that
statement and the toy dataset with any further arguments."""

from kaser.cli import main
from stage_runs import full_params

# the repository's params.yaml with the toy run's changes (the command reads every key from it)
PARAMS = full_params({"model": {"base": "tiny", "dtype": "float32", "folds": [0], "splits": ["student"]},
                      "generate": {"backend": "transformers", "k": 2, "temperature": 0.7, "top_k": 40,
                                   "top_p": 1.0, "repetition_penalty": 1.1, "max_new_tokens": 8,
                                   "batch_size": 4, "max_pairs": None, "seed": 0},
                      "annotate": {"backend": "static", "case_timeout_s": 0.5, "repair_rounds": 1,
                                   "max_repairs": 5, "generated_inputs": 5, "max_references": 2, "seed": 0},
                      "judge": {"backend": "static"}})
STATEMENT = "Return the sum of the numbers in the list xs."


def run(*argv):
    """`kaser simulate` on STATEMENT (Python, dataset toy, out sim/) with `argv` added."""
    main(["simulate", "--problem", STATEMENT, "--language", "python", "--dataset", "toy",
          "--out", "sim", *argv])
