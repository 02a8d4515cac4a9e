"""KASER's hybrid GRPO reward (paper §3.4) as TRL reward functions.

R = w_sim·similarity_reward + w_err·error_reward + w_div·diversity_reward. The `grpo` stage hands
`kaser.predictor.grpo.kaser_rewards(judge)` (similarity, the error reward bound to the judge and
diversity paid to valid codes only) to `trl.GRPOTrainer(reward_funcs=…)` and the weights
(`params.yaml` grpo.reward_weights, paper [1, 1, 1]) to `GRPOConfig(reward_weights=…)`; TRL
logs each part under the function's name (`rewards/similarity_reward/mean`, …). Each function
has TRL's form `f(completions, **kwargs) -> list[float]`, one value per completion. Check with
`python -m pytest tests/test_rewards.py`.

How TRL 1.16 calls a reward function (trl/trainer/grpo_trainer.py, `_calculate_rewards`):
- keywords `prompts`, `completions`, `completion_ids`, then every dataset column except
  `prompt` / `completion` / `completion_ids` as a list with one entry per completion (a row's value
  repeated for each of its completions), plus `trainer_state`, `log_extra` and `log_metric`;
- `completions` are strings for a standard (text) prompt, or `[{"role": "assistant", "content":
  str}]` for a conversational one; `completion_code` accepts both and strips markdown fences;
- layout: `RepeatSampler` puts the `num_generations` completions of a row next to each other, and
  each process scores only its local slice (per_device_train_batch_size × steps_per_generation
  completions). With several processes a group straddles two of them unless that product is a
  multiple of num_generations, so the `grpo` stage should keep it so.
Dataset columns read: `code` and `language` (similarity); `problem_id`, `errors` (ground-truth
labels) and `candidate_errors` (the problem's error list) (error); `language` and, if present,
`group_id` (diversity).

Departures from the authors' code (umass-ml4ed/code_personalization, grpo.py):
1. Diversity compares a completion with the other completions of its own group, found by the
   `group_id` column when the dataset has one (one id per dataset row; the safest, since two rows
   can share a prompt) and else by the prompt text, never by position. The released
   `diversity_reward` compares with every completion in the batch, so a completion is rewarded
   for differing from answers to other problems, which says nothing about mode collapse.
2. The error reward is `error_match` (kaser.metrics.sets): a correct real code is matched only
   by a completion the judge finds free of every error, as the released correctness branch, but
   for every row instead of a branch that assumes two prompts per batch. (Plain IoU, with
   IoU(∅, ∅) = 1, would pay prose diagnosed outside the candidate list 0.909 on correct pairs.)
3. A completion with no code (empty after removing fences) gets diversity 0, not 1: an empty
   answer has CodeBLEU 0 to everything and would otherwise collect the largest diversity reward.
   A group of one completion also gets 0 (nothing to differ from; GRPO gives such a group zero
   advantage anyway, and 0 keeps the logged mean honest).
4. The language comes from the dataset's `language` column per row rather than one bound per run,
   so a mixed Java/Python dataset trains in one run.
5. The code is taken from inside a markdown fence when the model wrote one; the released rewards
   only `.strip()` and rely on the prompt saying "no fences".
6. A completion cut off by the token budget gets 0 from all three rewards (`kaser_rewards` wraps
   similarity and diversity in `PaidWhenFinished`; `ErrorReward` does it itself): an unfinished
   program is no submission a student could make, and its syntax errors are the budget's. Paying
   the part written its CodeBLEU and its difference from the group taught GRPO to run to the
   budget: completions grew until 40-70% were cut off (docs/experiments-and-studies.md, "Does
   GRPO learn here?"). TRL logs the share cut off as `completions/clipped_ratio`.
7. A completion the judge finds invalid (it does not parse, Python, or compile, Java: the
   Verdict's `valid`, as the evaluation's "valid") gets diversity 0 (`PaidWhenValid`). The
   evaluation measures diversity over valid codes only; paid for any non-empty text, broken code
   earned more diversity than code that parses (in the CPU study at ce03546, 0.637 vs 0.536 per
   completion, since a broken variant differs more from its group), and GRPO's share of valid
   codes fell from Student SFT's 82% to 68%; paid to valid codes only, 94% of KASER's codes
   parsed in the CPU study at 7c94af4 (reports/study-student-python/earlier/README.md). A valid
   completion is still compared with every other completion of its group.
8. A completion that writes the prompt's scaffolding words as code (`kc`, `mastery`:
   kaser.code.syntax.prompt_words_in) gets 0 from all three rewards, as a cut-off one (`unpaid`).
   Such a code copies the prompt rather than simulating a student, and in the CPU study one of
   them earned the full error match on a pair whose real error was a typo.
9. On a pair whose real code is wrong, a code that is wrong as the student's was (it
   parses/compiles and is not clean: kaser.metrics.sets.outcome_match) earns at least
   `outcome_share` (params.yaml grpo.outcome_share; 0 is the paper's reward): the error reward
   there is max(label match, outcome_share × outcome match), never less than the paper's. On a
   correct pair the outcome match is the label match ("the code is clean"), so nothing changes.
   Why: the label match pays one student's label and not the next one's of the same problem
   (a problem's modal label holds for 58% of its wrong pairs, reports/error-reward-signal/), so
   on wrong pairs GRPO's push has no direction the prompt can tell, while the correct pairs all
   pull towards clean code. Whether a student errs at all is what the mastery profile predicts
   (within a problem, +0.26 pass probability per SD of the prompt's mastery in the CPU study).
CodeBLEU itself departs from the `codebleu` package only on empty code (kaser.metrics.codebleu).
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from kaser.code.syntax import prompt_words_in
from kaser.metrics.codebleu import codebleu, max_codebleu_to_rest
from kaser.metrics.sets import error_match, outcome_match

# a judge with verdicts(problem_id, codes, candidate_errors), or judge(problem_id, code, candidates) -> Verdict
Judge = Callable[[str, str, Sequence[str]], Any]

# a line that starts a markdown fence, and what follows the backticks on it (the info string)
_FENCE_LINE = re.compile(r"^[ \t]*```([^\n`]*)$")


def completion_code(completion: str | list[dict] | dict) -> str:
    """The code in one TRL completion: text or chat messages, inside a markdown fence or not.

    Conversational completions are message lists; the last assistant message counts. The first
    fence line opens a block when it names a language, when another fence line follows it, or
    when only blank lines come before it: then the code is that block (to the next fence line,
    or to the end when the budget cut the completion off). A bare fence after some text with no
    fence after it closes a block that was never opened: the code is the text before it (a
    model that writes its code bare and then closes a fence, maybe followed by an explanation;
    the fence would otherwise stay in the code as a syntax error no student typed). Blank lines
    around the code are dropped.

    >>> completion_code("```java\\nint x = 1;\\n```\\nThis sets x.")
    'int x = 1;'
    >>> completion_code([{"role": "assistant", "content": "def f():\\n    return 1\\n"}])
    'def f():\\n    return 1'
    >>> completion_code("Here it is:\\n```python\\nx = 1\\nwhile x:")  # cut off, no closing fence
    'x = 1\\nwhile x:'
    >>> completion_code("def f():\\n    return 1\\n```\\nIt returns 1.")  # closes a fence it never opened
    'def f():\\n    return 1'
    """
    lines = _message_text(completion).split("\n")
    fences = [i for i, line in enumerate(lines) if _FENCE_LINE.match(line)]
    if fences:
        first = fences[0]
        opens = (_FENCE_LINE.match(lines[first]).group(1).strip() or len(fences) > 1
                 or not any(line.strip() for line in lines[:first]))
        lines = lines[first + 1:fences[1] if len(fences) > 1 else None] if opens else lines[:first]
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join(lines).rstrip()


def similarity_reward(completions: list, code: list[str], language: list[str],
                      **kwargs: Any) -> list[float]:
    """CodeBLEU(ground-truth code, completion) in the row's language (paper R_Sim).

    Each ground-truth code is parsed once per batch however many completions it meets.

    >>> gt = "def add(a, b):\\n    return a + b"
    >>> similarity_reward(["```python\\n" + gt + "\\n```", "   "], code=[gt, gt],
    ...                   language=["python", "python"])
    [1.0, 0.0]
    """
    return [codebleu(reference, completion_code(completion), lang)
            for completion, reference, lang in zip(completions, code, language, strict=True)]


def diversity_reward(completions: list, language: list[str], prompts: list | None = None,
                     group_id: list | None = None, **kwargs: Any) -> list[float]:
    """1 − max CodeBLEU(reference=completion, prediction=other) over the other completions of
    the same group (paper R_Div, Eq. 3, in the authors' argument order).

    Groups are the completions sharing a `group_id` value, or if there is no such column the same
    prompt. A group of one and an empty completion score 0.

    >>> a = "int s = 0;\\nfor (int x : xs) s += x;\\nreturn s;"
    >>> b = "int s = 0;\\nint i = 0;\\nwhile (i < xs.length) { s = s + xs[i]; i++; }\\nreturn s;"
    >>> [round(r, 4) for r in diversity_reward([a, a, a, b], language=["java"] * 4,
    ...                                        prompts=["p1", "p1", "p2", "p2"])]
    [0.0, 0.0, 0.5922, 0.7455]
    """
    keys = _group_keys(len(completions), prompts, group_id)
    codes = [completion_code(completion) for completion in completions]
    if len(language) != len(codes):
        raise ValueError(f"diversity_reward: {len(codes)} completions, {len(language)} languages")
    members: dict[Any, list[int]] = defaultdict(list)
    for index, key in enumerate(keys):
        members[key].append(index)
    rewards = [0.0] * len(codes)
    for key, indices in members.items():
        if len(indices) < 2:
            continue
        languages = {language[i] for i in indices}
        if len(languages) > 1:
            raise ValueError(f"diversity_reward: group {key!r} mixes languages {sorted(languages)}")
        group_codes = [codes[i] for i in indices]
        for i, closest in zip(indices, max_codebleu_to_rest(group_codes, languages.pop())):
            rewards[i] = 1.0 - closest if codes[i].strip() else 0.0
    return rewards


class ErrorReward:
    """error_match(judge's verdict on the completion, ground-truth errors) (paper R_Error, with
    the authors' semantics; kaser.metrics.sets.error_match).

    `judge` has `verdicts(problem_id, codes, candidate_errors) -> [Verdict]` (kaser.errors.judge;
    the completions of one problem go to it together), or is a callable
    `judge(problem_id, code, candidate_errors) -> Verdict`. A correct real code (the `correct`
    column when the dataset has one, else no true labels) is matched only by a completion the
    judge finds clean; prose, a stub or an unfinished program is not. A completion cut off by
    the token budget (its last token id is not in `stop_token_ids`; TRL passes `completion_ids`)
    gets 0: its errors are the budget's, not a student's (departure 6).
    A callable class rather than a closure, as in TRL's own reward factories, so that it pickles
    (TRL's async GRPO sends reward functions to a child process); `__name__` names it in TRL's logs.

    >>> from kaser.errors.judge import Verdict
    >>> def judge(problem_id, code, candidate_errors):  # a toy judge for the example
    ...     if "= 1\\n" in code + "\\n":
    ...         return Verdict(frozenset({"Missing semicolon"}), False, False, frozenset({"Missing semicolon"}))
    ...     if ";" not in code:  # not Java at all: diagnosed outside the list
    ...         return Verdict(frozenset(), False, False, frozenset({"Syntax error"}))
    ...     return Verdict(frozenset(), True, True, frozenset())
    >>> reward = make_error_reward(judge)
    >>> reward(["int x = 1", "int x = 1;", "int x = 1", "Here is x."], problem_id=["p"] * 4,
    ...        errors=[["Missing semicolon"], [], ["Missing semicolon", "Type mismatch"], []],
    ...        candidate_errors=[["Missing semicolon", "Type mismatch"]] * 4)
    [1.0, 1.0, 0.5, 0.0]

    With `outcome_share` s, a wrong real code pays max(label match, s × outcome match)
    (departure 9): a valid code with a wrong answer earns s though its labels miss.

    >>> wrong = lambda problem_id, code, candidates: Verdict(frozenset(), False, True, frozenset({"Wrong answer"}))
    >>> make_error_reward(wrong, outcome_share=0.5)(["x = 2"], problem_id=["p"], errors=[["Typo"]],
    ...                                          candidate_errors=[["Typo"]], correct=[False])
    [0.5]
    """

    __name__ = "error_reward"

    def __init__(self, judge, stop_token_ids: Iterable[int] | None = None, outcome_share: float = 0.0):
        if not 0.0 <= outcome_share <= 1.0:
            raise ValueError(f"error_reward: outcome_share {outcome_share} is not in [0, 1]")
        self.judge = judge
        self.stop_token_ids = None if stop_token_ids is None else frozenset(stop_token_ids)
        self.outcome_share = outcome_share
        # per call with groups known: the share of groups whose rewards are all equal, which
        # give GRPO no error signal (kaser.predictor.grpo logs it per step)
        self.zero_spread_shares: list[float] = []

    def __call__(self, completions: list, problem_id: list[str], errors: list,
                 candidate_errors: list, completion_ids: list | None = None,
                 correct: list | None = None, **kwargs: Any) -> list[float]:
        rows = []
        for row, (problem, truth, candidates) in enumerate(zip(problem_id, errors, candidate_errors,
                                                               strict=True)):
            if truth is None or candidates is None:
                column = "errors" if truth is None else "candidate_errors"
                raise ValueError(f"error_reward: column {column}, completion {row} "
                                 f"(problem {problem}): missing label list; use [] for none")
            rows.append((problem, completion_code(completions[row]), tuple(candidates)))
        if len(completions) != len(rows):
            raise ValueError(f"error_reward: {len(completions)} completions, {len(rows)} label lists")
        cut = unpaid(completion_ids, self.stop_token_ids, len(rows), completions)
        judged = [i for i in range(len(rows)) if not cut[i]]
        verdicts = dict(zip(judged, judge_verdicts(self.judge, [rows[i] for i in judged])))
        rewards = []
        for index, truth in enumerate(errors):
            if cut[index]:
                rewards.append(0.0)
                continue
            verdict = verdicts[index]
            truth_correct = (not truth if correct is None or correct[index] is None
                             else bool(correct[index]))
            labels = error_match(verdict.errors, truth, verdict.clean, truth_correct)
            outcome = outcome_match(verdict.clean, verdict.valid, truth_correct)
            rewards.append(max(labels, self.outcome_share * outcome))
        if kwargs.get("group_id") is not None or kwargs.get("prompts") is not None:
            keys = _group_keys(len(rewards), kwargs.get("prompts"), kwargs.get("group_id"))
            self.zero_spread_shares.append(zero_spread_share(rewards, keys))
        return rewards


def judge_verdicts(judge, rows: list[tuple[str, str, tuple[str, ...]]]) -> list:
    """One verdict per (problem, code, candidates), one judge call per problem and list (a judge
    with `verdicts`), else one call per code. The static judge keeps its verdicts per (problem,
    code), so a second reward asking about the same batch runs nothing again."""
    if not hasattr(judge, "verdicts"):
        verdicts = [judge(problem, code, list(candidates)) for problem, code, candidates in rows]
    else:
        verdicts = [None] * len(rows)
        groups: dict[tuple, list[int]] = defaultdict(list)
        for index, (problem, _, candidates) in enumerate(rows):
            groups[(problem, candidates)].append(index)
        for (problem, candidates), indices in groups.items():
            found = judge.verdicts(problem, [rows[i][1] for i in indices], list(candidates))
            for i, verdict in zip(indices, found, strict=True):
                verdicts[i] = verdict
    for verdict in verdicts:
        if not (hasattr(verdict, "errors") and hasattr(verdict, "clean")):
            raise TypeError(f"the reward's judge must return kaser.errors.judge.Verdict, "
                            f"not {type(verdict).__name__} (a bare label set cannot say whether "
                            "the code is correct)")
    return verdicts


def zero_spread_share(rewards: list[float], keys: list) -> float:
    """The share of groups (completions with the same key) whose rewards are all equal.

    >>> zero_spread_share([0.0, 0.0, 1.0, 0.5, 0.2], ["a", "a", "b", "b", "c"])
    0.6666666666666666
    """
    groups: dict = defaultdict(list)
    for key, reward in zip(keys, rewards, strict=True):
        groups[key].append(reward)
    return sum(max(values) - min(values) <= 1e-12 for values in groups.values()) / len(groups)


def truncated(completion_ids: list | None, stop_token_ids: frozenset[int] | None,
              count: int, completions: list | None = None) -> list[bool]:
    """Which completions the token budget cut off. A completion that says so itself (a
    `kaser.predictor.sampling.Completion` with `truncated` set, as sampling returns them) is
    taken at its word; else its last token is no stop token (TRL's own
    `completions/clipped_ratio` rule). Without either, none.

    >>> truncated([[5, 2], [5, 7], []], frozenset({2}), 3)
    [False, True, True]
    >>> truncated(None, frozenset({2}), 2)
    [False, False]
    """
    if completions is not None and all(getattr(c, "truncated", None) is not None for c in completions):
        if len(completions) != count:
            raise ValueError(f"{count} rows but {len(completions)} completions")
        return [bool(c.truncated) for c in completions]
    if completion_ids is None or stop_token_ids is None:
        return [False] * count
    if len(completion_ids) != count:
        raise ValueError(f"{count} completions but {len(completion_ids)} completion_ids")
    return [not ids or ids[-1] not in stop_token_ids for ids in completion_ids]


def unpaid(completion_ids: list | None, stop_token_ids: frozenset[int] | None, count: int,
           completions: list) -> list[bool]:
    """Per completion: whether it earns no reward at all, being cut off by the budget (as
    `truncated` tells) or writing the prompt's words as code (departure 8).

    >>> unpaid(None, None, 3, ["def f(kc):\\n    return kc", "def f(n):\\n    return n", ""])
    [True, False, False]
    """
    cut = truncated(completion_ids, stop_token_ids, count, completions)
    return [off or bool(prompt_words_in(completion_code(c))) for off, c in zip(cut, completions, strict=True)]


class PaidWhenFinished:
    """A reward function that pays 0 to every completion the token budget cut off (departure 6)
    or that writes the prompt's words as code (departure 8), and what `reward` says to the rest. Told apart as `truncated` does: the completion's own
    flag, else its last token id against `stop_token_ids`. A class, not a closure, so that it
    pickles; `__name__` is the wrapped function's, as TRL logs it.

    >>> from kaser.predictor.sampling import Completion
    >>> paid = PaidWhenFinished(similarity_reward)
    >>> code = "def f():\\n    return 1"
    >>> paid([Completion(code, truncated=False), Completion(code, truncated=True)],
    ...      code=[code] * 2, language=["python"] * 2)
    [1.0, 0.0]
    """

    def __init__(self, reward: Callable[..., list[float]], stop_token_ids: Iterable[int] | None = None):
        self.reward = reward
        self.stop_token_ids = None if stop_token_ids is None else frozenset(stop_token_ids)
        self.__name__ = reward.__name__

    def __call__(self, completions: list, completion_ids: list | None = None, **kwargs: Any) -> list[float]:
        values = self.reward(completions, **kwargs)
        cut = unpaid(completion_ids, self.stop_token_ids, len(values), completions)
        return [0.0 if off else value for off, value in zip(cut, values, strict=True)]


class PaidWhenValid:
    """A reward function that pays 0 to a completion the judge finds invalid (it does not parse
    or compile: the Verdict's `valid`) or the token budget cut off (told apart as `truncated`
    does), and what `reward` says to the rest (departure 7). Only finished completions go to
    the judge, as in the error reward, whose verdicts the static judge has kept. A class, not a
    closure, so that it pickles; `__name__` is the wrapped function's, as TRL logs it.

    >>> from kaser.errors.judge import Verdict
    >>> def judge(problem_id, code, candidate_errors):  # a toy judge: "(" unclosed is invalid
    ...     ok = code.count("(") == code.count(")")
    ...     return Verdict(frozenset(), ok, ok, frozenset() if ok else {"Syntax error"})
    >>> paid = PaidWhenValid(diversity_reward, judge)
    >>> [round(r, 3) for r in paid(["print(1)", "print((1)", "x = [2, 3]"], language=["python"] * 3,
    ...                             problem_id=["p"] * 3, candidate_errors=[[]] * 3, group_id=[0] * 3)]
    [0.75, 0.0, 0.75]
    """

    def __init__(self, reward: Callable[..., list[float]], judge,
                 stop_token_ids: Iterable[int] | None = None):
        self.reward = reward
        self.judge = judge
        self.stop_token_ids = None if stop_token_ids is None else frozenset(stop_token_ids)
        self.__name__ = reward.__name__

    def __call__(self, completions: list, problem_id: list[str], candidate_errors: list,
                 completion_ids: list | None = None, **kwargs: Any) -> list[float]:
        values = self.reward(completions, problem_id=problem_id, candidate_errors=candidate_errors,
                             **kwargs)
        cut = unpaid(completion_ids, self.stop_token_ids, len(values), completions)
        finished = [i for i in range(len(values)) if not cut[i]]
        rows = [(problem_id[i], completion_code(completions[i]), tuple(candidate_errors[i] or ()))
                for i in finished]
        valid = {i: bool(v.valid) for i, v in zip(finished, judge_verdicts(self.judge, rows))}
        return [value if valid.get(i, False) else 0.0 for i, value in enumerate(values)]


def make_error_reward(judge, stop_token_ids: Iterable[int] | None = None,
                      outcome_share: float = 0.0) -> ErrorReward:
    """The error reward bound to a judge (and, to tell a truncated completion, the tokenizer's
    EOS and pad ids; and the share paid for a wrong pair's outcome, departure 9), ready for
    `GRPOTrainer(reward_funcs=[...])`."""
    return ErrorReward(judge, stop_token_ids, outcome_share)


def _group_keys(count: int, prompts: list | None, group_id: list | None) -> list:
    """One hashable group key per completion: the group_id column, else the prompt text."""
    if group_id is not None:
        keys = list(group_id)
        source = "group_id"
    elif prompts is not None:
        keys = [p if isinstance(p, str) else json.dumps(p, sort_keys=True, default=str)
                for p in prompts]
        source = "prompts"
    else:
        raise ValueError("diversity_reward needs a group_id column or the prompts to find groups")
    if len(keys) != count:
        raise ValueError(f"diversity_reward: {count} completions but {len(keys)} {source}")
    return keys


def _message_text(completion: str | list[dict] | dict) -> str:
    """Text of a completion in TRL's standard (str) or conversational (messages) format."""
    if isinstance(completion, str):
        return completion
    messages = [completion] if isinstance(completion, dict) else list(completion)
    replies = [m for m in messages if m.get("role", "assistant") == "assistant"]
    if not replies:
        return ""
    content = replies[-1].get("content") or ""
    if isinstance(content, list):  # content parts: [{"type": "text", "text": ...}, ...]
        content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content
