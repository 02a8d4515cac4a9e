"""The student code predictor (paper §3.2-3.4): the base model, the knowledge-aware prompt, Student
SFT, the hybrid GRPO reward and training, sampling, and the history-based baselines (ICL,
PersonaPrompt, ParaStudent). Stages: `base_model`, `sft`, `grpo`, `ablate`, `parastudent`,
`generate`, `baseline_<method>`.
"""
