"""Student SFT on a tiny model: the loss covers the code only, and training moves the LoRA weights."""

import json

import polars as pl
from safetensors.torch import load_file

from kaser import config
from kaser.predictor.sft import (SftParams, sample_pairs, sft_examples, sft_trainer, student_reply,
                                 train_sft)
from tiny_lm import tiny_model_folder

CODES = ["public int sum(int a, int b) {\n  return a + b;\n}",
         "public int sum(int a, int b) {\n  return a - b;\n}",
         "int sum(int a, int b) { a + b; }",
         "public int sum(int a, int b) { return a+b }"]


def pairs(n=4):
    return pl.DataFrame({
        "student_id": [f"s{i}" for i in range(n)], "problem_id": ["p1"] * n, "step": [0] * n,
        "language": ["java"] * n, "statement": ["Return the sum of a and b."] * n,
        "signature": ["public int sum(int a, int b)"] * n,
        "kcs": [["arithmetic", "return"]] * n,
        "mastery": [[0.2, 0.9], [0.5, 0.5], [0.9, 0.1], [0.3, 0.3]][:n],
        "code": CODES[:n]})


def test_examples_are_conversational_prompt_completion():
    example = sft_examples(pairs(1))[0]
    assert [m["role"] for m in example["prompt"]] == ["system", "user"]
    assert example["completion"] == [{"role": "assistant", "content": CODES[0] + "\n"}]
    # the student prompt, starter signature included
    assert "\n\nFunction signature: public int sum(int a, int b)\n\n" in example["prompt"][1]["content"]


def test_the_reply_is_the_code_ending_in_one_line_break():
    assert student_reply("\n\ndef f():\n    return 1  \n\n\n") == "def f():\n    return 1\n"
    assert student_reply("x = 1", ending="") == "x = 1"
    stripped = sft_examples(pairs(2), ending="")
    assert [e["completion"][0]["content"] for e in stripped] == CODES[:2]


def test_sample_pairs_is_seeded_and_keeps_all_when_small():
    table = pairs(4)
    assert sample_pairs(table, None, 0).equals(table)
    assert sample_pairs(table, 10, 0).equals(table)
    two = sample_pairs(table, 2, 0)
    assert two.height == 2 and two.equals(sample_pairs(table, 2, 0))


def test_loss_is_on_the_completion_only(tmp_path):
    trainer = sft_trainer(tiny_model_folder(), pairs(1), config.settings(SftParams, "sft"), tmp_path, dtype="float32")
    example = trainer.train_dataset[0]
    tokenizer = trainer.processing_class
    trained = [t for t, label in zip(example["input_ids"], example["labels"]) if label != -100]
    masked = [t for t, label in zip(example["input_ids"], example["labels"]) if label == -100]
    # the end of the reply follows the code's own closing line break
    assert tokenizer.decode(trained) == CODES[0] + "\n<|im_end|>\n"
    assert tokenizer.decode(masked).endswith("Simulate the student written code:<|im_end|>\n"
                                             "<|im_start|>assistant\n")


def test_training_moves_the_lora_weights_and_logs_each_step(tmp_path):
    params = config.settings(SftParams, "sft", lora_r=4, lora_alpha=8, batch_size=2, learning_rate=1e-2)
    log = train_sft(tiny_model_folder(), pairs(4), params, tmp_path, dtype="float32")
    steps = [entry for entry in log if "loss" in entry]
    assert [entry["step"] for entry in steps] == [1, 2]
    assert all(entry["loss"] > 0 for entry in steps)
    adapter_config = json.loads((tmp_path / "adapter_config.json").read_text())
    assert adapter_config["r"] == 4 and sorted(adapter_config["target_modules"]) == ["k_proj", "o_proj",
                                                                                     "q_proj", "v_proj"]
    adapter = load_file(tmp_path / "adapter_model.safetensors")
    lora_b = {name: t for name, t in adapter.items() if "lora_B" in name}
    # peft starts every B at exactly zero: a non-zero B is what training changed
    assert len(lora_b) == 2 * 4
    assert all(t.abs().sum() > 0 for t in lora_b.values())
