"""KASER GRPO (paper §3.3-3.4): continue the Student SFT adapter with group-relative policy
optimisation on the hybrid reward R = w_sim·CodeBLEU + w_err·IoU(errors) + w_div·diversity.

    python stages/grpo.py synthetic-python         # the DVC stage: models/<ds>/grpo/<split>-<fold>/ (LoRA adapters)
    dvc exp run -S 'grpo.reward_weights=[0,1,1]' # an ablation

`trl.GRPOTrainer` samples `num_generations` completions per prompt (the student prompt of
`kaser.predictor.prompt`, conversational, so TRL applies the chat template exactly as sampling
does), scores them with the reward functions of `kaser.predictor.rewards` in the order
[similarity_reward, error_reward, diversity_reward] and `reward_weights` from params, and
updates the SFT adapter, loaded trainable (`PeftModel.from_pretrained(..., is_trainable=True)`).
With beta 0 no reference model is kept. TRL logs each reward's mean and std per step
(`rewards/<name>/mean`); `train_grpo` returns that log history for reports/.

The authors' settings (grpo.py): group size 5, lr 1e-7, 1 epoch, beta 0, top_k 40, repetition
penalty 1.1, max completion 400 tokens, reward weights [1, 1, 1], DAPO loss (TRL's default),
10 completions (2 prompts) per device step.

Departures from the authors' code, and why:
1. Temperature 0.7 (docs/design.md, the value they sample with at evaluation); the released GRPO
   script samples with temperature 1 during training. A param.
2. Each dataset row carries a `group_id`, so the diversity reward compares a completion with the
   other completions of its own group, not the whole batch; it pays only completions the judge
   finds valid (see kaser.predictor.rewards, departures 1 and 7).
3. The CPU default trains on at most `max_pairs` pairs (seeded draw) and may use a larger
   learning rate than 1e-7 (params.yaml says which): a few dozen steps at 1e-7 would leave the
   adapter where SFT put it.
4. `max_completion_length: auto` takes the budget from the data (kaser.predictor.sampling
   .completion_budget: a high percentile of the real first submissions' token counts, capped)
   instead of a fixed 400; it is logged at the end of each run's log history. A completion cut
   off by the budget gets reward 0 (kaser.predictor.rewards, departure 6), and the rows
   carry the real code's correctness (`correct`) so that the error reward matches a correct
   student only with a completion the judge finds free of every error.
5. No repetition penalty during training either (`repetition_penalty: 1.0`; theirs 1.1), as at
   sampling (kaser.predictor.sampling, departure 4): the rollouts GRPO learns from should be
   drawn as the evaluated codes are.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from kaser import InputError
from kaser.errors.cluster import join_submission_errors
from kaser.methods import METHODS
from kaser.predictor.rewards import (Judge, PaidWhenFinished, PaidWhenValid, diversity_reward,
                                     make_error_reward, similarity_reward)
from kaser.predictor.sft import sample_pairs
from kaser.predictor.prompt import pair_messages, read_pairs

REWARD_NAMES = ("similarity_reward", "error_reward", "diversity_reward")
# params.yaml `ablations.rewards` names -> the method a GRPO run without that reward is scored as
ABLATION_METHODS = {m.dropped_reward: m.name for m in METHODS.values() if m.dropped_reward}


@dataclass(frozen=True)
class GrpoParams:
    num_generations: int
    prompts_per_step: int
    learning_rate: float
    epochs: float
    beta: float
    temperature: float
    top_k: int
    top_p: float
    repetition_penalty: float
    max_completion_length: int | str  # or a number of tokens; auto: completion_budget of the data
    budget_percentile: float  # with auto: percentile of the first submissions' tokens
    budget_cap: int  # with auto: at most this many completion tokens
    reward_weights: tuple[float, ...]
    outcome_share: float  # on a wrong pair: the least error reward a wrong answer earns
    loss_type: str
    num_iterations: int  # policy updates per generated batch (TRL's mu)
    steps_per_generation: int | None  # optimizer steps one generated batch is split into
    epsilon: float  # PPO clip range of the importance ratio
    scale_rewards: str  # group | batch | none: advantage divided by the reward std
    multi_objective_aggregation: str  # or normalize_then_sum (GDPO)
    mask_truncated_completions: bool  # a cut-off completion adds nothing to the loss
    lr_scheduler_type: str
    max_pairs: int | None
    gradient_checkpointing: bool
    use_vllm: bool  # TRL generates the groups with vLLM (GPU; pip install '.[gpu]')
    vllm_mode: str  # colocate (same GPUs as training) | server (`trl vllm-serve`)
    seed: int


def ablated(params: GrpoParams, reward: str) -> GrpoParams:
    """`params` with the weight of one reward (similarity, error or diversity) set to 0: the
    paper's "KASER w/o R" ablations (Table 1).

    >>> from kaser.config import settings
    >>> ablated(settings(GrpoParams, "grpo", reward_weights=(1.0, 0.5, 1.0)), "error").reward_weights
    (1.0, 0.0, 1.0)
    """
    if reward not in ABLATION_METHODS:
        raise InputError(f"unknown reward {reward!r} in ablations.rewards; "
                         f"choose from {', '.join(ABLATION_METHODS)}")
    weights = list(params.reward_weights)
    weights[REWARD_NAMES.index(f"{reward}_reward")] = 0.0
    return dataclasses.replace(params, reward_weights=tuple(weights))


def read_error_truth(folder) -> tuple[pl.DataFrame, dict[str, list[str]]]:
    """The cluster stage's outputs GRPO is rewarded against: (submission_errors.parquet, problem
    -> candidate labels from problem_errors.json) of a dataset folder."""
    import json

    folder = Path(folder)
    for name in ("submission_errors.parquet", "problem_errors.json"):
        if not (folder / name).is_file():
            raise InputError("not found; run the cluster stage first", file=folder / name)
    return (pl.read_parquet(folder / "submission_errors.parquet"),
            json.loads((folder / "problem_errors.json").read_text()))


def with_errors(pairs: pl.DataFrame, submission_errors: pl.DataFrame,
                problem_errors: dict[str, list[str]]) -> pl.DataFrame:
    """Add each pair's ground-truth error labels (`errors`) and its problem's candidate list
    (`candidate_errors`, what the judge chooses from), from the cluster stage's outputs."""
    joined = join_submission_errors(pairs, submission_errors)
    candidates = [list(problem_errors.get(problem, [])) for problem in joined["problem_id"]]
    return joined.with_columns(pl.Series("candidate_errors", candidates, dtype=pl.List(pl.String)))


def grpo_examples(pairs: pl.DataFrame) -> list[dict]:
    """TRL prompt-only rows with the columns the rewards read (see kaser.predictor.rewards)."""
    return [{"prompt": messages, "code": row["code"], "language": row["language"],
             "problem_id": row["problem_id"], "errors": list(row["errors"]),
             "candidate_errors": list(row["candidate_errors"]), "group_id": index}
            | ({"correct": row["correct"]} if "correct" in row else {})
            for index, (messages, row) in enumerate(zip(pair_messages(pairs),
                                                        pairs.iter_rows(named=True)))]


def with_correctness(pairs: pl.DataFrame, submissions: pl.DataFrame) -> pl.DataFrame:
    """`pairs` with the real submission's `correct` column (joined by student, problem, step)."""
    keys = ["student_id", "problem_id", "step"]
    return pairs.join(submissions.select(*keys, "correct").unique(keys), on=keys, how="left")


def kaser_rewards(judge: Judge, stop_token_ids=None, outcome_share: float = 0.0) -> list:
    """The hybrid reward's parts, in the order of `reward_weights`; each pays 0 to a completion
    the token budget cut off, diversity pays 0 to one the judge finds invalid, and on a wrong
    pair `outcome_share` of the error reward pays for a wrong answer (kaser.predictor.rewards,
    departures 6, 7 and 9)."""
    return [PaidWhenFinished(similarity_reward, stop_token_ids),
            make_error_reward(judge, stop_token_ids, outcome_share),
            PaidWhenValid(diversity_reward, judge, stop_token_ids)]


def grpo_trainer(model_path, sft_adapter, pairs: pl.DataFrame, params: GrpoParams, out_dir,
                 judge: Judge, dtype: str = "auto"):
    """A ready `trl.GRPOTrainer` continuing `sft_adapter` on `pairs` (with_errors table)."""
    import torch
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    from kaser.predictor.base_model import load_model, stop_token_ids

    if not isinstance(params.max_completion_length, int):
        raise InputError(f"max_completion_length {params.max_completion_length!r} must be resolved "
                         "to a number first (resolve_completion_length)")
    if len(params.reward_weights) != len(REWARD_NAMES):
        raise InputError(f"reward_weights needs {len(REWARD_NAMES)} values "
                         f"({', '.join(REWARD_NAMES)}), got {list(params.reward_weights)}")
    model, tokenizer = load_model(model_path, adapter=sft_adapter, dtype=dtype, trainable=True)
    model.train()
    chosen = sample_pairs(pairs, params.max_pairs, params.seed)
    dataset = Dataset.from_list(grpo_examples(chosen))
    args = GRPOConfig(
        output_dir=str(out_dir),
        learning_rate=params.learning_rate,
        num_train_epochs=params.epochs,
        per_device_train_batch_size=params.prompts_per_step * params.num_generations,
        num_generations=params.num_generations,
        beta=params.beta,
        temperature=params.temperature, top_k=params.top_k, top_p=params.top_p,
        repetition_penalty=params.repetition_penalty,
        max_completion_length=params.max_completion_length,
        reward_weights=list(params.reward_weights),
        loss_type=params.loss_type,
        num_iterations=params.num_iterations, steps_per_generation=params.steps_per_generation,
        epsilon=params.epsilon, scale_rewards=params.scale_rewards,
        multi_objective_aggregation=params.multi_objective_aggregation,
        mask_truncated_completions=params.mask_truncated_completions,
        lr_scheduler_type=params.lr_scheduler_type,
        activation_checkpointing=params.gradient_checkpointing,
        bf16=False, fp16=False,   # the model is loaded in its compute dtype already
        logging_steps=1, save_strategy="no", report_to="none", disable_tqdm=False,
        seed=params.seed, data_seed=params.seed,
        dataloader_pin_memory=torch.cuda.is_available(),
        use_vllm=params.use_vllm, vllm_mode=params.vllm_mode,
    )
    rewards = kaser_rewards(judge, stop_token_ids(model, tokenizer), params.outcome_share)
    trainer = logging_trainer(GRPOTrainer)(model=model, reward_funcs=rewards, args=args,
                                           train_dataset=dataset, processing_class=tokenizer)
    trainer.error_reward = rewards[REWARD_NAMES.index("error_reward")]
    return trainer


def group_reward_rows(rewards, weights, group_ids: list, problem_ids: list, step: int) -> list[dict]:
    """One row per group of a generated batch: the optimizer `step` that batch first trains,
    the group's dataset row (`group_id`) and problem, the mean of each reward part over its
    completions and of their weighted sum (`reward`, summed as TRL sums it, a missing part as 0).
    `rewards` is TRL's completions x parts tensor, `weights` its reward weights.

    >>> import torch
    >>> rows = group_reward_rows(torch.tensor([[0.5, 1.0, 0.0], [0.3, 0.0, 0.2], [0.9, 1.0, 0.0]]),
    ...                          torch.tensor([1.0, 1.0, 2.0]), [7, 7, 8], ["p", "p", "q"], 1)
    >>> [(row["group_id"], row["problem_id"], row["error_reward"], row["reward"]) for row in rows]
    [(7, 'p', 0.5, 1.1), (8, 'q', 1.0, 1.9)]
    >>> rows[0]["step"], rows[0]["similarity_reward"], rows[0]["diversity_reward"]
    (1, 0.4, 0.1)
    """
    import torch

    totals = (rewards * weights.to(rewards.device).unsqueeze(0)).nansum(dim=1)
    rows = []
    for group_id in dict.fromkeys(group_ids):
        members = torch.tensor([g == group_id for g in group_ids], device=rewards.device)
        row = {"step": step, "group_id": group_id,
               "problem_id": problem_ids[group_ids.index(group_id)]}
        for index, name in enumerate(REWARD_NAMES):
            row[name] = round(float(rewards[members, index].nanmean()), 6)
        row["reward"] = round(float(totals[members].mean()), 6)
        rows.append(row)
    return rows


def logging_trainer(base):
    """`base` (trl.GRPOTrainer) that also logs, each step, `error_zero_spread_share`: the share
    of the step's groups whose error reward is the same for every completion, so that GRPO gets
    no error signal from them. A step that reuses a generated batch (num_iterations or
    steps_per_generation > 1) logs that batch's share. It keeps each generated batch's reward
    per group (`group_rewards`, rows of `group_reward_rows`), so that a rise on a pool of pairs
    revisited each epoch can be told from the spread between pairs. It computes the policy's
    log-probabilities with each group's prompt through the model once
    (kaser.predictor.shared_prompt), not once per completion as TRL does."""

    class KaserGRPOTrainer(base):
        error_reward = None
        _zero_spread_share = None
        share_prompts = True     # kaser.predictor.shared_prompt; False: TRL's own forward

        def _get_per_token_logps_and_entropies(self, model, input_ids, attention_mask,
                                               logits_to_keep, batch_size=None,
                                               compute_entropy=False, compute_aux_loss=False,
                                               **media):
            from kaser.predictor.shared_prompt import completion_logps, prompt_groups

            prompt_length = input_ids.size(1) - logits_to_keep
            language_model = model.get_base_model() if hasattr(model, "get_base_model") else model
            if (self.share_prompts and not compute_aux_loss
                    and all(value is None for value in media.values())
                    and self.accelerator.num_processes == 1
                    and self.accelerator.unwrap_model(model) is model
                    and not getattr(language_model, "is_activation_checkpointing", False)
                    and prompt_length >= 2):
                groups = prompt_groups(input_ids, attention_mask, prompt_length)
                if len(groups) < input_ids.size(0):     # some prompt has several completions
                    with self.accelerator.autocast():
                        logps, entropies = completion_logps(model, input_ids, attention_mask,
                                                            logits_to_keep, groups, batch_size,
                                                            compute_entropy)
                    return logps, entropies, None
            return super()._get_per_token_logps_and_entropies(
                model, input_ids, attention_mask, logits_to_keep, batch_size=batch_size,
                compute_entropy=compute_entropy, compute_aux_loss=compute_aux_loss, **media)

        def _calculate_rewards(self, inputs, prompts, completions, completion_ids_list):
            from accelerate.utils import gather_object

            rewards = super()._calculate_rewards(inputs, prompts, completions, completion_ids_list)
            group_ids = gather_object([example["group_id"] for example in inputs])
            problem_ids = gather_object([example["problem_id"] for example in inputs])
            if not hasattr(self, "group_rewards"):
                self.group_rewards = []
            self.group_rewards += group_reward_rows(rewards, self.reward_weights, group_ids,
                                                    problem_ids, self.state.global_step + 1)
            return rewards

        def log(self, logs: dict, start_time: float | None = None) -> None:
            shares = self.error_reward.zero_spread_shares if self.error_reward is not None else []
            if shares:
                self._zero_spread_share = sum(shares) / len(shares)
                shares.clear()
            if self.model.training and self._zero_spread_share is not None and "loss" in logs:
                logs = {**logs, "error_zero_spread_share": self._zero_spread_share}
            super().log(logs, start_time)

    return KaserGRPOTrainer


def train_grpo(model_path, sft_adapter, pairs: pl.DataFrame, params: GrpoParams, out_dir,
               judge: Judge, dtype: str = "auto") -> list[dict]:
    """Continue the SFT adapter with GRPO; save the adapter to out_dir; return TRL's log history
    (per step: loss, reward, reward_std, rewards/<name>/mean and /std, completions/mean_length, ...)
    and last {"group_rewards": rows of `group_reward_rows`, every generated batch's groups}."""
    trainer = grpo_trainer(model_path, sft_adapter, pairs, params, out_dir, judge, dtype)
    trainer.train()
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    trainer.save_model(str(out_dir))
    return list(trainer.state.log_history) + [{"group_rewards": getattr(trainer, "group_rewards", [])}]


def train_runs(folder, model, params: GrpoParams, judge: Judge, base_model, sft_adapter_of,
               out_dir_of, dtype: str = "auto") -> dict[str, list[dict]]:
    """GRPO for every training run of `model` (ModelParams) on the dataset in `folder`: each
    continues its run's SFT adapter `sft_adapter_of(split, fold)` of `base_model` on its run's
    training pairs, with the cluster stage's errors, and is saved to `out_dir_of(split, fold)`.
    Returns {run name: TRL log history}, in run order."""
    from kaser.predictor.base_model import run_name

    from kaser.data.contracts import read_dataset

    folder = Path(folder)
    submission_errors, problem_errors = read_error_truth(folder)
    _, submissions = read_dataset(folder)
    params = resolve_completion_length(params, base_model, submissions)
    print(f"grpo: max_completion_length {params.max_completion_length}")
    logs = {}
    for split, fold in model.runs():
        pairs = with_errors(with_correctness(read_pairs(folder, split, fold, "train"), submissions),
                            submission_errors, problem_errors)
        log = train_grpo(base_model, sft_adapter_of(split, fold), pairs, params,
                         out_dir_of(split, fold), judge, dtype)
        logs[run_name(split, fold)] = log + [{"max_completion_length": params.max_completion_length}]
    return logs


def resolve_completion_length(params: GrpoParams, model_path, submissions: pl.DataFrame) -> GrpoParams:
    """`params` with `max_completion_length: auto` replaced by the data's budget."""
    from kaser.predictor.sampling import AUTO, data_budget
    if params.max_completion_length != AUTO:
        if not isinstance(params.max_completion_length, int) or params.max_completion_length < 1:
            raise InputError(f"max_completion_length must be a positive number or {AUTO!r}, not "
                             f"{params.max_completion_length!r}")
        return params
    from kaser.predictor.base_model import load_tokenizer
    budget = data_budget(load_tokenizer(model_path), submissions, params.budget_percentile,
                         params.budget_cap)
    return dataclasses.replace(params, max_completion_length=budget)
