"""KASER GRPO on a tiny model: the real hybrid reward, a toy judge, and LoRA weights that move."""

import polars as pl
import pytest
import torch

from kaser import InputError, config
from kaser.predictor.grpo import GrpoParams, grpo_examples, grpo_trainer, train_grpo, with_errors
from kaser.predictor.base_model import load_model
from tiny_lm import lora_state, tiny_model_folder


def pairs():
    return pl.DataFrame({
        "student_id": ["s1", "s2"], "problem_id": ["p1", "p2"], "step": [0, 0],
        "language": ["java", "java"],
        "statement": ["Return the sum of a and b.", "Return a times b."],
        "signature": ["public int sum(int a, int b)", None],
        "kcs": [["arithmetic"], ["arithmetic"]], "mastery": [[0.2], [0.9]],
        "code": ["public int sum(int a, int b) {\n  return a + b;\n}",
                 "int mul(int a, int b) { return a*b; }"]})


def labelled():
    errors = pl.DataFrame({"student_id": ["s1", "s2"], "problem_id": ["p1", "p2"],
                           "errors": [["Missing return"], []]})
    return with_errors(pairs(), errors, {"p1": ["Missing return", "Off by one"]})


def test_with_errors_adds_truth_and_the_problems_candidates():
    table = labelled()
    assert table["errors"].to_list() == [["Missing return"], []]
    assert table["candidate_errors"].to_list() == [["Missing return", "Off by one"], []]


def test_with_errors_fails_on_a_pair_without_labels():
    errors = pl.DataFrame({"student_id": ["s1"], "problem_id": ["p1"], "errors": [["X"]]})
    with pytest.raises(InputError, match="no errors row for student s2, problem p2"):
        with_errors(pairs(), errors, {})


def test_examples_carry_the_reward_columns_and_one_group_per_row():
    examples = grpo_examples(labelled())
    assert [e["group_id"] for e in examples] == [0, 1]
    assert set(examples[0]) == {"prompt", "code", "language", "problem_id", "errors",
                                "candidate_errors", "group_id"}
    assert examples[0]["prompt"][1]["content"].startswith(
        "Problem: Return the sum of a and b.\n\nFunction signature: public int sum(int a, int b)\n\n")
    assert "Function signature" not in examples[1]["prompt"][1]["content"]   # none known for p2


def test_reward_weights_must_match_the_three_rewards(tmp_path):
    with pytest.raises(InputError, match="reward_weights needs 3 values"):
        grpo_trainer(tiny_model_folder(), None, labelled(), config.settings(GrpoParams, "grpo", reward_weights=(1.0, 1.0), max_completion_length=8),
                     tmp_path, judge=lambda *a: None, dtype="float32")


@pytest.fixture
def sft_adapter(tmp_path):
    """An adapter as the SFT stage leaves it; B initialised randomly so every tensor gets a
    gradient on the first step (a zero B gives A none)."""
    from peft import LoraConfig, get_peft_model
    model, _ = load_model(tiny_model_folder(ending=True), dtype="float32", trainable=True)
    peft_model = get_peft_model(model, LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj",
                                                  "v_proj"], init_lora_weights=False,
                                                  task_type="CAUSAL_LM"))
    peft_model.save_pretrained(tmp_path / "sft")
    return tmp_path / "sft", lora_state(peft_model)


def shared_prompt_batch():
    """Two prompts of 3 completions each, as TRL lays a GRPO batch out: the first prompt
    left-padded (pad = SmolLM2's end token, 2), completions right-padded after their end token."""
    prompt_a = [2, 2, 105, 2206, 318, 42]
    prompt_b = [733, 11, 4096, 58, 902, 17]
    completions = [[300, 301, 2, 2], [310, 2, 2, 2], [320, 321, 322, 323],
                   [330, 331, 2, 2], [340, 341, 342, 2], [350, 2, 2, 2]]
    ends = [3, 2, 4, 3, 4, 2]       # completion tokens kept, the end token included
    input_ids = torch.tensor([(prompt_a if row < 3 else prompt_b) + completions[row]
                              for row in range(6)])
    attention_mask = torch.tensor([([0, 0, 1, 1, 1, 1] if row < 3 else [1] * 6)
                                   + [1] * ends[row] + [0] * (4 - ends[row]) for row in range(6)])
    return input_ids, attention_mask


def test_a_group_shares_its_prompt_forward_and_scores_as_trl_does(tmp_path, monkeypatch):
    """The shared-prompt log-probabilities, entropies and LoRA gradients equal TRL's own
    (kaser.predictor.shared_prompt), with a padded prompt, padded completions and two groups
    whose rows are mixed, as in a batch TRL has shuffled."""
    from peft import LoraConfig, get_peft_model

    import kaser.predictor.shared_prompt as shared_prompt

    model, _ = load_model(tiny_model_folder(ending=True), dtype="float32", trainable=True)
    peft_model = get_peft_model(model, LoraConfig(r=4, lora_alpha=8, init_lora_weights=False,
                                                  target_modules=["q_proj", "k_proj", "v_proj",
                                                                  "o_proj"], task_type="CAUSAL_LM"))
    peft_model.save_pretrained(tmp_path / "sft")
    trainer = grpo_trainer(tiny_model_folder(ending=True), tmp_path / "sft", labelled(),
                           config.settings(GrpoParams, "grpo", num_generations=3, max_completion_length=4, temperature=0.7),
                           tmp_path / "grpo", judge=lambda *a: None, dtype="float32")
    calls, original = [], shared_prompt.completion_logps

    def counted(*args, **kwargs):
        calls.append(args[1].size(0))
        return original(*args, **kwargs)

    monkeypatch.setattr(shared_prompt, "completion_logps", counted)
    input_ids, attention_mask = shared_prompt_batch()
    shuffled = torch.tensor([3, 0, 4, 1, 5, 2])     # TRL updates on a shuffled batch
    input_ids, attention_mask = input_ids[shuffled], attention_mask[shuffled]
    results = {}
    for share in (True, False):
        trainer.share_prompts = share
        trainer.model.zero_grad()
        logps, entropies, _ = trainer._get_per_token_logps_and_entropies(
            trainer.model, input_ids, attention_mask, 4, compute_entropy=True)
        (logps * attention_mask[:, 6:]).sum().backward()
        grads = {name: p.grad.clone() for name, p in trainer.model.named_parameters()
                 if p.requires_grad}
        results[share] = (logps.detach(), entropies.detach(), grads)
    assert calls == [6]                   # only the shared run went through shared_prompt
    shared, own = results[True], results[False]
    assert shared[0].shape == own[0].shape == (6, 4)
    assert torch.all(own[0][attention_mask[:, 6:] == 0] == 0)       # TRL zeroes the padding
    assert torch.allclose(shared[0], own[0], atol=1e-5)
    assert torch.allclose(shared[1], own[1], atol=1e-5)
    assert shared[2].keys() == own[2].keys() and len(own[2]) == 16   # A and B of 4 modules x 2 layers
    for name in own[2]:
        assert own[2][name].abs().sum() > 0
        # float32 sums in another order: equal to about 1e-6 of the largest entry
        assert (shared[2][name] - own[2][name]).abs().max() <= 1e-5 * own[2][name].abs().max(), name


def test_prompt_groups_find_a_prompts_rows_in_any_order_and_split_on_the_mask():
    from kaser.predictor.shared_prompt import prompt_groups

    input_ids, attention_mask = shared_prompt_batch()
    assert prompt_groups(input_ids, attention_mask, 6) == [[0, 1, 2], [3, 4, 5]]
    shuffled = torch.tensor([3, 0, 4, 1, 5, 2])     # as TRL shuffles a batch before an update
    assert prompt_groups(input_ids[shuffled], attention_mask[shuffled], 6) == [[0, 2, 4], [1, 3, 5]]
    mask = attention_mask.clone()
    mask[1, 1] = 1                        # the same tokens, padded otherwise: another prompt
    assert prompt_groups(input_ids, mask, 6) == [[0, 2], [1], [3, 4, 5]]


@pytest.mark.slow   # about 10 s alone, over 20 s on a busy 2-core machine
def test_grpo_continues_the_sft_adapter_and_logs_each_reward(tmp_path, sft_adapter):
    adapter, before = sft_adapter
    seen = []

    def judge(problem_id, code, candidates):   # a toy judge: the rewards are the real ones
        from kaser.errors.judge import Verdict
        seen.append((problem_id, tuple(candidates)))
        found = frozenset(candidates[:1] if len(code) % 2 else [])
        return Verdict(found, not found, True, found)

    params = config.settings(GrpoParams, "grpo", num_generations=3, prompts_per_step=2, learning_rate=1e-3,
                        max_completion_length=12)
    log = train_grpo(tiny_model_folder(ending=True), adapter, labelled(), params, tmp_path / "grpo",
                     judge, dtype="float32")
    step = log[0]
    # a model that ends some completions: a cut-off one earns nothing, so one that never ends
    # would leave every reward 0 and the weights where they were
    assert 0 < step["completions/clipped_ratio"] < 1
    for name in ("similarity_reward", "error_reward", "diversity_reward"):
        assert 0.0 <= step[f"rewards/{name}/mean"] <= 1.0
    assert step["reward"] == pytest.approx(sum(step[f"rewards/{name}/mean"] for name in
                                               ("similarity_reward", "error_reward",
                                                "diversity_reward")), abs=1e-5)
    # each prompt's completions that finished went to the judge with that problem's candidate
    # list, twice (the error reward, then diversity's validity gate: this toy judge keeps no
    # verdicts, as the static judge does); those cut off by the 12-token budget were not judged
    assert set(seen) <= {("p1", ("Missing return", "Off by one")), ("p2", ())}
    assert len(seen) == 2 * round(6 * (1 - step["completions/clipped_ratio"]))
    # and each group of the batch has its own row, whose rewards average to the logged ones
    groups = log[-1]["group_rewards"]
    assert [(g["step"], g["problem_id"]) for g in sorted(groups, key=lambda g: g["group_id"])] == \
        [(1, "p1"), (1, "p2")]
    assert sorted(g["group_id"] for g in groups) == [0, 1]
    for name in ("similarity_reward", "error_reward", "diversity_reward", "reward"):
        logged = step["reward"] if name == "reward" else step[f"rewards/{name}/mean"]
        assert sum(g[name] for g in groups) / 2 == pytest.approx(logged, abs=1e-5)
    trained, _ = load_model(tiny_model_folder(ending=True), adapter=tmp_path / "grpo", dtype="float32")
    after = lora_state(trained)
    assert after.keys() == before.keys()
    assert all(not torch.equal(before[name], after[name]) for name in before)


def test_a_prose_policy_earns_less_total_reward_than_the_true_code(tmp_path):
    # the hybrid reward as GRPO computes it (the three functions, weights [1, 1, 1]) over a small
    # batch with the real static judge: two students of one problem (one correct, one with the
    # wrong-operator error), 3 completions each. Prose earns error reward 0 everywhere, also on
    # the correct student, where plain IoU(∅, ∅) would pay 1.
    from kaser.errors.judge import StaticJudge
    from kaser.errors.static_annotator import StaticParams
    from kaser.predictor.grpo import kaser_rewards
    from hike_problem import CANDIDATES, CORRECT, PROBLEM, WRONG_OPERATOR, dataset

    judge = StaticJudge(*dataset(tmp_path), config.settings(StaticParams, "annotate", part=True))
    rows = [(CORRECT, [], True), (WRONG_OPERATOR, ["Incorrect logical operator"], False)]
    columns = {"code": [], "language": [], "problem_id": [], "errors": [], "candidate_errors": [],
               "correct": [], "group_id": []}
    for group, (code, errors, correct) in enumerate(rows):
        for _ in range(3):
            for key, value in (("code", code), ("language", "python"), ("problem_id", PROBLEM.problem_id),
                               ("errors", errors), ("candidate_errors", CANDIDATES),
                               ("correct", correct), ("group_id", group)):
                columns[key].append(value)
    prose = ["We go hiking when it is warm enough and it does not rain too much.",
             "The function returns True if the temperature allows hiking.",
             "Check the temperature range, which is narrower when it rains."] * 2
    weights = config.settings(GrpoParams, "grpo").reward_weights

    def mean_total(completions):
        parts = [f(completions, prompts=["p"] * 6, completion_ids=[[5, 0]] * 6, **columns)
                 for f in kaser_rewards(judge, stop_token_ids=[0])]
        return sum(w * sum(p) / len(p) for w, p in zip(weights, parts)), parts

    prose_total, prose_parts = mean_total(prose)
    true_total, true_parts = mean_total(columns["code"])
    assert prose_parts[1] == [0.0] * 6                         # no error reward for prose
    assert true_parts[0] == pytest.approx([1.0] * 6) and true_parts[1] == [1.0] * 6
    assert true_parts[2] == [0.0] * 6                          # identical completions: no diversity
    assert true_total == pytest.approx(2.0)
    assert prose_total < true_total


def test_auto_completion_length_comes_from_the_first_submissions():
    from kaser.predictor.base_model import load_tokenizer
    from kaser.predictor.grpo import resolve_completion_length
    from kaser.predictor.sampling import data_budget
    submissions = pl.DataFrame({"student_id": ["a", "b"], "problem_id": ["p", "p"], "step": [0, 0],
                                "code": ["x = 1", "y = [i * i for i in range(10)]"]})
    auto = resolve_completion_length(config.settings(GrpoParams, "grpo", max_completion_length="auto", budget_percentile=100),
                                     tiny_model_folder(), submissions)
    assert auto.max_completion_length == data_budget(load_tokenizer(tiny_model_folder()), submissions, 100, 1024)
    assert resolve_completion_length(config.settings(GrpoParams, "grpo", max_completion_length=12), tiny_model_folder(),
                                     submissions).max_completion_length == 12
    with pytest.raises(InputError, match="must be resolved"):
        grpo_trainer(tiny_model_folder(), None, labelled(), config.settings(GrpoParams, "grpo", max_completion_length="auto"),
                     "unused", judge=None, dtype="float32")


def test_with_correctness_joins_the_real_submissions_score():
    from kaser.predictor.grpo import with_correctness
    submissions = pl.DataFrame({"student_id": ["s1", "s2", "s1"], "problem_id": ["p1", "p2", "p1"],
                                "step": [0, 0, 1], "correct": [False, True, True]})
    table = with_correctness(pairs(), submissions)
    assert table["correct"].to_list() == [False, True]      # step 0's, not the later retry's
    assert grpo_examples(with_errors(table, pl.DataFrame(
        {"student_id": ["s1", "s2"], "problem_id": ["p1", "p2"], "errors": [["Missing return"], []]}),
        {}))[1]["correct"] is True


@pytest.mark.slow   # about 10 s: two optimizer steps from one generated batch
def test_each_generated_batch_gives_num_iterations_updates_and_the_zero_spread_share(tmp_path, sft_adapter):
    from kaser.errors.judge import Verdict

    adapter, _ = sft_adapter
    params = config.settings(GrpoParams, "grpo", num_generations=3, prompts_per_step=2, learning_rate=1e-3,
                        max_completion_length=12, num_iterations=2, epsilon=0.1,
                        scale_rewards="none", multi_objective_aggregation="normalize_then_sum",
                        mask_truncated_completions=True, lr_scheduler_type="constant")
    trainer = grpo_trainer(tiny_model_folder(), adapter, labelled(), params, tmp_path / "grpo",
                           judge=lambda *a: Verdict(frozenset(), True, True, frozenset()),
                           dtype="float32")
    args = trainer.args
    assert (args.num_iterations, args.epsilon, args.scale_rewards, args.multi_objective_aggregation,
            args.mask_truncated_completions, args.lr_scheduler_type) == \
        (2, 0.1, "none", "normalize_then_sum", True, "constant")
    trainer.train()
    steps = [entry for entry in trainer.state.log_history if "loss" in entry]
    assert len(steps) == 2          # 2 prompts x 3 completions generated once, used twice
    # the judge finds every finished code clean, so a group's error rewards differ only where
    # the 12-token budget cut some completions off and not others
    for step in steps:
        assert 0.0 <= step["error_zero_spread_share"] <= 1.0
    assert steps[0]["error_zero_spread_share"] == steps[1]["error_zero_spread_share"]


def test_zero_spread_share_counts_groups_whose_rewards_are_equal():
    from kaser.predictor.rewards import zero_spread_share

    assert zero_spread_share([1.0, 1.0, 0.0, 0.0], [0, 0, 1, 1]) == 1.0
    assert zero_spread_share([1.0, 0.5, 0.0, 0.0], [0, 0, 1, 1]) == 0.5
    assert zero_spread_share([0.3], ["only"]) == 1.0     # a group of one has no spread either
