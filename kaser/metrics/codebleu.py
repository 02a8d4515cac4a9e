"""CodeBLEU with the `codebleu` package's numbers, fast when one code meets many others.

CodeBLEU (Ren et al. 2020) of a prediction against a reference is
    0.25·BLEU + 0.25·keyword-weighted BLEU + 0.25·AST subtree match + 0.25·data-flow match.
The paper uses it three times: the similarity reward CodeBLEU(GT code, completion), the
diversity reward 1 − max CodeBLEU against the rest of the group, and the evaluation tables.

`codebleu.calc_codebleu` (package 0.7.0) re-reads its keyword file, rebuilds the tree-sitter
language, and parses both codes twice (once for the AST match, once for the data flow) on every
call. A GRPO group of 5 needs 5 similarity and 20 pairwise scores, so it parses the same six codes
about a hundred times. Here each code is reduced once to its `CodeFeatures` (whitespace tokens and
their 1–4-gram counts, keyword weights, AST subtree s-expressions, normalised data-flow edges),
cached by (code, language); a score is then a few dictionary look-ups. `python
benchmarks/reward_speed.py` measures the gain. The numbers equal the package's on non-empty code
(tests/test_metrics_codebleu.py compares both on more than 50 Java and Python pairs, to 1e-9).

The argument order matters, CodeBLEU is not symmetric: the AST and data-flow parts count what of
the *reference* is found in the *prediction*, the weighted n-gram part is a recall over the
reference, plain BLEU a precision over the prediction.

Departures from `codebleu.calc_codebleu`:
1. An empty or whitespace-only prediction or reference scores 0. The package gives 0.25 there
   (an empty data flow counts as a full match), which would pay a policy for printing nothing.
2. Only Java and Python, the project's languages, and only the default weights (0.25 each), the
   ones the paper uses.
3. Scores are per sample (sentence level, `calc_codebleu` on one pair); averaging over samples is
   the caller's job. A corpus-level score pools counts across pairs and is not offered.
Kept on purpose, to give the same numbers: a data-flow match of 0 counts as 1 (the package's
`dataflow_match_score or 1`), and the AST part counts reference subtrees found in the prediction
(the package's own TODO says the paper means the other direction), and the weighted n-gram part's
brevity penalty takes 2 as the reference length (the length of the package's [tokens, weights]
pair), so in effect it has none. Also kept: the package's data-flow extractor orders some parent
lists through sets of strings, so on some pairs the data-flow match depends on the process's
hash seed (we saw 0.125 and 0.208 for one pair); every DVC stage therefore runs with
PYTHONHASHSEED=0 (dvc.yaml), which makes the pipeline's numbers the same from run to run.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import codebleu as codebleu_package
from codebleu.dataflow_match import normalize_dataflow
from codebleu.parser import (
    DFG_java,
    DFG_python,
    index_to_code_token,
    remove_comments_and_docstrings,
    tree_to_token_index,
)
from codebleu.utils import get_tree_sitter_language
from tree_sitter import Parser, Tree

LANGUAGES = ("java", "python")
PARTS = ("ngram_match_score", "weighted_ngram_match_score", "syntax_match_score",
         "dataflow_match_score")
PART_WEIGHTS = (0.25, 0.25, 0.25, 0.25)   # alpha, beta, gamma, theta: the paper's and the package's
NGRAM_WEIGHTS = (0.25, 0.25, 0.25, 0.25)  # BLEU-4 inside the two n-gram parts
KEYWORD_WEIGHT, OTHER_TOKEN_WEIGHT = 1, 0.2  # unigram weights in the weighted n-gram part
SMOOTHING_EPSILON = 0.1  # added to a zero n-gram count (NLTK smoothing method 1, as the package)
CACHE_SIZE = 2048  # codes kept parsed: a GRPO generation batch and its references fit many times

_DATAFLOW_FUNCTIONS = {"java": DFG_java, "python": DFG_python}
_KEYWORDS_DIR = Path(codebleu_package.__file__).parent / "keywords"


@dataclass(frozen=True, eq=False)
class CodeFeatures:
    """Everything CodeBLEU reads from one (stripped, non-empty) code, as reference or prediction."""

    token_count: int
    ngram_counts: tuple[Counter, ...]     # n = 1..4: Counter of n-gram tuples of whitespace tokens
    token_weights: dict[str, float]       # 1 for a language keyword, 0.2 for any other token
    weighted_unigram_total: float         # max(1, Σ count·weight): weighted recall's denominator
    subtrees: Counter                     # s-expression of every AST node that has children
    subtree_total: int
    dataflow: Counter                     # normalised data-flow edges (name, relation, parents)
    dataflow_total: int


def codebleu(reference: str, prediction: str, language: str) -> float:
    """CodeBLEU of `prediction` against `reference`, as `calc_codebleu([reference], [prediction])`.

    >>> round(codebleu("def f(x):\\n    return x + 1", "def f(x):\\n    return x + 1", "python"), 6)
    1.0
    >>> codebleu("int a = 1;", "   ", "java")
    0.0
    """
    return codebleu_parts(reference, prediction, language)["codebleu"]


def codebleu_many(reference: str, predictions: list[str], language: str) -> list[float]:
    """CodeBLEU of each prediction against one reference, which is parsed once.

    >>> [round(s, 4) for s in codebleu_many("return a + b;", ["return a + b;", ""], "java")]
    [1.0, 0.0]
    """
    return [codebleu(reference, prediction, language) for prediction in predictions]


def max_codebleu_to_rest(codes: list[str], language: str) -> list[float]:
    """For each code i: max over j ≠ i of CodeBLEU(reference=codes[i], prediction=codes[j]).

    This is the paper's Eq. 3 term max CodeBLEU(ĉ, ĉ_i) with the code being scored in the
    reference slot, as in the authors' `diversity_reward` (umass-ml4ed/code_personalization,
    grpo.py: `compute_code_bleu_modified([completions[i]], [completions[j]])`, whose first argument
    is the ground truth). Each code is parsed once for all n·(n−1) scores. Needs 2 codes or more.

    >>> codes = ["total = a + b", "total = a + b", ""]
    >>> [round(s, 4) for s in max_codebleu_to_rest(codes, "python")]
    [1.0, 1.0, 0.0]
    """
    if len(codes) < 2:
        raise ValueError(f"max_codebleu_to_rest needs at least 2 codes, got {len(codes)}")
    return [max(codebleu(code, other, language) for j, other in enumerate(codes) if j != i)
            for i, code in enumerate(codes)]


def codebleu_parts(reference: str, prediction: str, language: str) -> dict[str, float]:
    """CodeBLEU and its four parts, under the keys `calc_codebleu` returns.

    `dataflow_match_score` is reported as computed (0 when nothing matched or the reference has no
    data flow); the total counts such a 0 as 1, as the package does.

    >>> parts = codebleu_parts("return a;", "return b;", "java")
    >>> sorted(parts) == sorted(("codebleu",) + PARTS)
    True
    """
    if language not in LANGUAGES:
        raise ValueError(f"CodeBLEU language must be one of {LANGUAGES}, got {language!r}")
    reference, prediction = reference.strip(), prediction.strip()
    if not reference or not prediction:
        return dict.fromkeys(("codebleu",) + PARTS, 0.0)
    ref, hyp = code_features(reference, language), code_features(prediction, language)
    parts = dict(zip(PARTS, (_ngram_match(ref, hyp), _weighted_ngram_match(ref, hyp),
                             _syntax_match(ref, hyp), _dataflow_match(ref, hyp))))
    alpha, beta, gamma, theta = PART_WEIGHTS
    parts["codebleu"] = (alpha * parts["ngram_match_score"]
                         + beta * parts["weighted_ngram_match_score"]
                         + gamma * parts["syntax_match_score"]
                         + theta * (parts["dataflow_match_score"] or 1))
    return parts


@lru_cache(maxsize=CACHE_SIZE)
def code_features(code: str, language: str) -> CodeFeatures:
    """Parse one code (already stripped) into what CodeBLEU needs; cached by (code, language)."""
    tokens = code.split()
    ngram_counts = tuple(Counter(zip(*(tokens[i:] for i in range(n))))
                         for n in range(1, len(NGRAM_WEIGHTS) + 1))
    keywords = _keywords(language)
    token_weights = {t: KEYWORD_WEIGHT if t in keywords else OTHER_TOKEN_WEIGHT for t in tokens}
    weighted_unigram_total = max(1, sum(count * token_weights[unigram[0]]
                                        for unigram, count in ngram_counts[0].items()))
    try:  # the package strips comments when it can and keeps the code as it is when it cannot
        code = remove_comments_and_docstrings(code, language)
    except Exception:
        pass
    tree = _parser(language).parse(bytes(code, "utf8"))
    subtrees = Counter(_subtree_sexps(tree))
    edges = normalize_dataflow(_dataflow(tree, code, language))
    dataflow = Counter((name, relation, tuple(parents)) for name, relation, parents in edges)
    return CodeFeatures(len(tokens), ngram_counts, token_weights, weighted_unigram_total,
                        subtrees, sum(subtrees.values()), dataflow, sum(dataflow.values()))


def _ngram_match(ref: CodeFeatures, hyp: CodeFeatures) -> float:
    """BLEU-4: clipped n-gram precision of the prediction."""
    precisions = []
    for ref_counts, hyp_counts in zip(ref.ngram_counts, hyp.ngram_counts):
        matched = sum(min(count, ref_counts.get(ngram, 0)) for ngram, count in hyp_counts.items())
        precisions.append((matched, max(1, sum(hyp_counts.values()))))
    return _bleu(precisions, hyp.token_count, ref.token_count)


def _weighted_ngram_match(ref: CodeFeatures, hyp: CodeFeatures) -> float:
    """BLEU-4 over n-gram recall of the reference, unigrams weighted by keyword-ness."""
    hyp_unigrams = hyp.ngram_counts[0]
    unigram_recall = sum(min(count, hyp_unigrams.get(unigram, 0)) * ref.token_weights[unigram[0]]
                         for unigram, count in ref.ngram_counts[0].items())
    recalls = [(unigram_recall, ref.weighted_unigram_total)]
    for ref_counts, hyp_counts in zip(ref.ngram_counts[1:], hyp.ngram_counts[1:]):
        matched = sum(min(count, hyp_counts.get(ngram, 0)) for ngram, count in ref_counts.items())
        recalls.append((matched, max(1, sum(ref_counts.values()))))
    # The package measures the reference length for the brevity penalty on its [tokens, weights]
    # pair, which has length 2: only predictions of one or two tokens are ever penalised.
    return _bleu(recalls, hyp.token_count, 2)


def _bleu(ratios: list[tuple[float, float]], hyp_length: int, ref_length: int) -> float:
    """Geometric mean of smoothed (matched, total) ratios times the brevity penalty."""
    if ratios[0][0] == 0:
        return 0.0
    if hyp_length > ref_length:
        brevity_penalty = 1.0
    else:
        brevity_penalty = math.exp(1 - ref_length / hyp_length)
    log_ratios = (w * math.log((matched or SMOOTHING_EPSILON) / total)
                  for w, (matched, total) in zip(NGRAM_WEIGHTS, ratios))
    return brevity_penalty * math.exp(math.fsum(log_ratios))


def _syntax_match(ref: CodeFeatures, hyp: CodeFeatures) -> float:
    """Share of the reference's AST subtrees that also occur in the prediction."""
    matched = sum(count for sexp, count in ref.subtrees.items() if sexp in hyp.subtrees)
    return matched / ref.subtree_total


def _dataflow_match(ref: CodeFeatures, hyp: CodeFeatures) -> float:
    """Share of the reference's data-flow edges matched one-to-one in the prediction (0 if none)."""
    if ref.dataflow_total == 0:
        return 0.0
    matched = sum(min(count, hyp.dataflow.get(edge, 0)) for edge, count in ref.dataflow.items())
    return matched / ref.dataflow_total


def _subtree_sexps(tree: Tree) -> list[str]:
    """S-expressions of the root and of every node with children (the package's subtree list)."""
    sexps, stack = [], [tree.root_node]
    while stack:
        node = stack.pop()
        sexps.append(str(node))
        stack.extend(child for child in node.children if child.children)
    return sexps


def _dataflow(tree: Tree, code: str, language: str) -> list[tuple]:
    """Data-flow edges (name, token index, relation, parent names, parent indices), merged per
    token, from an already parsed tree: the package's `get_data_flow` without its second parse.
    Any failure of the package's extractor on broken code means no data flow, as there."""
    try:
        root = tree.root_node
        spans = tree_to_token_index(root)
        lines = code.split("\n")
        index_to_code = {span: (i, index_to_code_token(span, lines))
                         for i, span in enumerate(spans)}
        try:
            edges, _ = _DATAFLOW_FUNCTIONS[language](root, index_to_code, {})
        except Exception:
            edges = []
        edges = sorted(edges, key=lambda edge: edge[1])
        linked = {edge[1] for edge in edges if edge[-1]} | {i for edge in edges for i in edge[-1]}
        edges = [edge for edge in edges if edge[1] in linked]
    except Exception:
        edges = []
    merged: dict[int, tuple] = {}
    for edge in edges:
        token = edge[1]
        if token in merged:  # same set-then-list merge as the package, so the edge order matches
            old = merged[token]
            edge = (edge[0], token, edge[2],
                    list(set(old[3] + edge[3])), list(set(old[4] + edge[4])))
        merged[token] = edge
    return list(merged.values())


@lru_cache(maxsize=None)
def _parser(language: str) -> Parser:
    return Parser(get_tree_sitter_language(language))


@lru_cache(maxsize=None)
def _keywords(language: str) -> frozenset[str]:
    path = _KEYWORDS_DIR / f"{language}.txt"
    return frozenset(line.strip() for line in path.read_text(encoding="utf-8").splitlines())
