"""Student SFT (paper §3.2): LoRA fine-tuning of the base model to write a student's code from the
problem and the student's knowledge profile. Also the "Student SFT" baseline, and where GRPO starts.

    python stages/sft.py synthetic-python          # the DVC stage: models/<ds>/sft/<split>-<fold>/ (LoRA adapters)

Data are prompt-completion pairs in TRL's conversational form: the prompt is the chat of
`kaser.predictor.prompt.build_messages` (problem, KCs, mastery before the attempt), the completion
the student's code as the assistant's reply. `trl.SFTTrainer` renders both through the chat
template and computes the loss on the completion only (`completion_only_loss`), as the authors
mask the prompt tokens out of the labels. The ParaStudent baseline trains the same way on its own
in-context examples (`train_examples`, examples from `kaser.predictor.history_prompts.parastudent_examples`).

Departures from the authors' code (umass-ml4ed/code_personalization, sft.py), and why:
1. TRL's SFTTrainer instead of a hand-written loop; the loss is the same token-level NLL on the
   completion. The authors keep the epoch with the best validation loss; we train a fixed number
   of epochs (params) and keep the last, since there is no validation split in our folds.
2. LoRA r/alpha/dropout and the learning rate come from params.yaml (the authors' Hydra config is
   not released; their target modules q/k/v/o_proj are our default).
3. The CPU default trains on at most `max_pairs` pairs drawn with a fixed seed, to fit the
   pipeline's time budget; `max_pairs: null` uses every training pair, as the paper does.
4. The reply is the code ending in one line break (`student_reply`); the authors' is
   `code.strip()`, so their end token follows the last code token directly.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl

from kaser.predictor.prompt import pair_messages


@dataclass(frozen=True)
class SftParams:
    lora_r: int
    lora_alpha: int
    lora_dropout: float
    target_modules: tuple[str, ...]
    learning_rate: float
    epochs: float
    batch_size: int
    gradient_accumulation_steps: int
    max_length: int
    max_pairs: int | None
    gradient_checkpointing: bool
    seed: int


def sample_pairs(pairs: pl.DataFrame, max_pairs: int | None, seed: int) -> pl.DataFrame:
    """At most `max_pairs` rows, drawn without replacement with `seed`; all when None."""
    if max_pairs is None or pairs.height <= max_pairs:
        return pairs
    return pairs.sample(n=max_pairs, seed=seed, shuffle=False).sort("student_id", "step")


def student_reply(code: str, ending: str = "\n") -> str:
    """The assistant message a model learns to write for a student's `code`: the code without the
    blank lines around it, then `ending` (one line break, as a saved source file ends).

    With the line break the end of the reply comes at the start of a line, where it competes
    with the student's next line (a dedented `return x`, a closing `}`); with the code stripped
    (`ending=""`, departure 4) it comes right after the last token of whichever line was just
    written. benchmarks/code_endings.py samples both side by side: on synthetic Python neither
    ending changed the share of codes without `return` beyond its interval (reports/code-endings/)."""
    return code.strip() + ending


def sft_examples(pairs: pl.DataFrame, ending: str = "\n") -> list[dict]:
    """TRL conversational prompt-completion examples: the student prompt -> the student's code
    (`student_reply`)."""
    return [{"prompt": messages,
             "completion": [{"role": "assistant", "content": student_reply(code, ending)}]}
            for messages, code in zip(pair_messages(pairs), pairs["code"].to_list())]


def lora_config(params):
    """peft LoraConfig from a params object with lora_r, lora_alpha, lora_dropout, target_modules."""
    from peft import LoraConfig
    return LoraConfig(r=params.lora_r, lora_alpha=params.lora_alpha,
                      lora_dropout=params.lora_dropout, target_modules=list(params.target_modules),
                      bias="none", task_type="CAUSAL_LM")


def sft_trainer(model_path, pairs: pl.DataFrame, params: SftParams, out_dir, dtype: str = "auto"):
    """A ready `trl.SFTTrainer` for `pairs` (a `student_pairs` table), LoRA attached."""
    chosen = sample_pairs(pairs, params.max_pairs, params.seed)
    return examples_trainer(model_path, sft_examples(chosen), params, out_dir, dtype)


def examples_trainer(model_path, examples: list[dict], params: SftParams, out_dir,
                     dtype: str = "auto", adapter=None):
    """A ready `trl.SFTTrainer` for prepared conversational prompt-completion `examples` (all of
    them: `params.max_pairs` is the caller's draw), a new LoRA attached, or the LoRA `adapter`
    folder continued (its own rank and modules; `params`' LoRA keys are then unused)."""
    import torch
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    from kaser.predictor.base_model import load_model

    if not examples:
        raise ValueError("no training examples")
    model, tokenizer = load_model(model_path, adapter=adapter, dtype=dtype, trainable=True,
                                  padding_side="right")
    model.train()
    dataset = Dataset.from_list(examples)
    args = SFTConfig(
        output_dir=str(out_dir),
        learning_rate=params.learning_rate,
        num_train_epochs=params.epochs,
        per_device_train_batch_size=params.batch_size,
        gradient_accumulation_steps=params.gradient_accumulation_steps,
        max_length=params.max_length,
        completion_only_loss=True,
        activation_checkpointing=params.gradient_checkpointing,
        # the model is loaded in its compute dtype already; no autocast on top
        bf16=False, fp16=False,
        logging_steps=1, save_strategy="no", report_to="none", disable_tqdm=False,
        seed=params.seed, data_seed=params.seed,
        dataloader_pin_memory=torch.cuda.is_available(),
    )
    return SFTTrainer(model=model, args=args, train_dataset=dataset, processing_class=tokenizer,
                      peft_config=None if adapter is not None else lora_config(params))


def train_sft(model_path, pairs: pl.DataFrame, params: SftParams, out_dir,
              dtype: str = "auto") -> list[dict]:
    """Train a LoRA adapter on `pairs` (a `student_pairs` table) and save it (with the tokenizer)
    to out_dir.

    Returns TRL's log history: one entry per optimizer step (loss, grad_norm, learning_rate,
    epoch, step, ...) and a closing summary entry (train_runtime, train_loss, ...).
    """
    return _train(sft_trainer(model_path, pairs, params, out_dir, dtype), out_dir)


def continue_sft(model_path, adapter, pairs: pl.DataFrame, params: SftParams, out_dir,
                 dtype: str = "auto") -> list[dict]:
    """Go on training the LoRA `adapter` with SFT on all of `pairs` (params' epochs, batch and
    learning rate); save it to out_dir. The control beside GRPO in benchmarks/grpo_learns.py:
    as many updates on the same pairs, with the real codes as targets instead of a reward."""
    return _train(examples_trainer(model_path, sft_examples(pairs), params, out_dir, dtype, adapter),
                  out_dir)


def train_examples(model_path, examples: list[dict], params: SftParams, out_dir,
                   dtype: str = "auto") -> list[dict]:
    """`train_sft` on prepared prompt-completion `examples` (e.g. ParaStudent's in-context ones)."""
    return _train(examples_trainer(model_path, examples, params, out_dir, dtype), out_dir)


def _train(trainer, out_dir) -> list[dict]:
    trainer.train()
    trainer.save_model(str(out_dir))
    return list(trainer.state.log_history)
