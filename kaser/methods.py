"""The one table of prediction methods: KASER, the paper's baselines and KASER's reward ablations.

Every place that names a method reads it here: the generate/baselines/ablate stages (which
adapter and which prompt a method samples with), the evaluation (where its predictions live,
which methods are baselines), GRPO (which reward an ablation drops) and the report (its label).

    from kaser.methods import METHODS
    METHODS["student_sft"].label        # 'Student SFT'
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Method:
    name: str                     # params evaluate.methods / the predictions file's stem
    label: str                    # as the paper's tables print it
    role: str                     # "reference" (KASER) | "baseline" | "ablation"
    prompt: str                   # "student": problem + KC mastery (kaser.predictor.prompt);
                                  # "history": the student's earlier submissions (history_prompts)
    adapter: str | None = None    # the training stage whose LoRA adapter it samples with
    dropped_reward: str | None = None   # ablations: the params ablations.rewards name set to weight 0

    @property
    def predictions_dir(self) -> str:
        """The folder of a dataset's folder that holds its predictions: the ablate stage writes
        ablations/, generate and baselines write predictions/."""
        return "ablations" if self.role == "ablation" else "predictions"


METHODS: dict[str, Method] = {m.name: m for m in (
    Method("kaser", "KASER", "reference", "student", adapter="grpo"),
    Method("student_sft", "Student SFT", "baseline", "student", adapter="sft"),
    Method("icl", "ICL", "baseline", "history"),
    Method("persona", "PersonaPrompt", "baseline", "history"),
    Method("parastudent", "ParaStudent", "baseline", "history", adapter="parastudent"),
    Method("kaser_no_sim", "KASER w/o R_Sim", "ablation", "student", adapter="grpo", dropped_reward="similarity"),
    Method("kaser_no_err", "KASER w/o R_Error", "ablation", "student", adapter="grpo", dropped_reward="error"),
    Method("kaser_no_div", "KASER w/o R_Div", "ablation", "student", adapter="grpo", dropped_reward="diversity"),
)}

REFERENCE_METHOD = "kaser"


def names(role: str) -> tuple[str, ...]:
    """The methods of one role, in table order.

    >>> names("ablation")
    ('kaser_no_sim', 'kaser_no_err', 'kaser_no_div')
    """
    return tuple(m.name for m in METHODS.values() if m.role == role)


def label(name: str) -> str:
    """A method's printed name (the name itself for one the table does not know)."""
    return METHODS[name].label if name in METHODS else name
