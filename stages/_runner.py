"""The one door between the DVC stages and kaser: params.yaml, the data/<ds>/ layout, the exit.

    from _runner import Stage, run
    PARAMS = ("model", "sft")   # what the stage reads

    def main(dataset: str) -> None:
        stage = Stage("sft", dataset, PARAMS)
        model = stage.section("model", ModelParams)
        train_sft(stage.base_model, pairs, params, stage.adapter("sft", run_name(split, fold)), ...)

    if __name__ == "__main__":
        run(main)

Nothing under kaser/ opens params.yaml or knows where a dataset's files live; every stage script
reads its settings here (into the frozen dataclasses of kaser, through `kaser.config.from_dict`,
every field from params.yaml) and takes its paths from `Stage` (data/<ds>/, reports/<ds>/,
models/base/, the adapters under models/<ds>/, its own LLM cache).

What a stage reads is declared once, in its script:
- the script's module-level `PARAMS` lists the params keys it may read (a tuple of dotted keys,
  `{dataset}` standing for the dataset name; or, for a script behind several stages, a dict from
  variant to such a tuple: the variant is the script's second argument, e.g. the method of
  stages/generate.py, else the stage name, e.g. report / readme of stages/report.py).
  `Stage.section` refuses to read a key that `PARAMS` does not cover, so the list cannot fall
  behind the code;
- `make dvc-deps` (stages/_dvc_deps.py) writes `PARAMS` into the stage's params in dvc.yaml, and
  tests/test_pipeline.py fails when the two differ.
The sections in `OPERATIONAL` may be read by any stage and are declared by none, because they
cannot change an output: `llm_client` says how to reach the LLM server, how patient to be and
what a request costs, while an answer is keyed by `llm` alone. Changing them reruns nothing.

`run(main)` gives every stage the same usage line (from `main`'s parameters), turns a
`kaser.InputError` into one line on stderr and exit status 2, and Ctrl-C into one line and 130.
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
from pathlib import Path
from typing import Any, TypeVar


from kaser import InputError, exit_on_error
from kaser.config import from_dict, load_settings

T = TypeVar("T")
PARAMS_FILE = Path("params.yaml")

# params sections read but declared in no PARAMS and no dvc.yaml: none of them changes an output
OPERATIONAL = ("llm_client",)


def covered(key: str, declared) -> bool:
    """Whether dotted `key` is declared itself or under a declared section.

    >>> covered("model.dtype", ["model"]), covered("model", ["model.dtype"])
    (True, False)
    """
    return any(key == d or key.startswith(d + ".") for d in declared)


def operational(key: str) -> bool:
    """Whether dotted `key` lies in a section that changes no output.

    >>> operational("llm_client.timeout_s"), operational("llm.model")
    (True, False)
    """
    return key.partition(".")[0] in OPERATIONAL


def read_params(path: Path = PARAMS_FILE) -> dict[str, Any]:
    if not path.is_file():
        raise InputError("params file not found (run from the repository root)", file=path)
    return load_settings(path.read_text()) or {}


class Stage:
    """One stage run: its settings (only the declared ones) and its paths."""

    def __init__(self, name: str, dataset: str | None, reads, params_file: Path = PARAMS_FILE):
        self.name, self.dataset, self.params_file = name, dataset, Path(params_file)
        self.reads = tuple(key.format(dataset=dataset) for key in reads)
        self._params: dict | None = None

    # ------------------------------------------------------------ settings

    def _check(self, key: str) -> None:
        if not (operational(key) or covered(key, self.reads)):
            raise RuntimeError(f"stages/{self.name}.py reads params key {key!r}, which its PARAMS "
                               f"({', '.join(self.reads)}) does not declare; add it there and "
                               "to the stage's params in dvc.yaml")

    def raw(self, key: str) -> Any:
        """The value at dotted `key` (None when absent), e.g. "datasets.synthetic-python"."""
        self._check(key)
        if self._params is None:
            self._params = read_params(self.params_file)
        value: Any = self._params
        for part in key.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        return value

    def section(self, name: str, cls: type[T], *, part: bool = False,
                keys: tuple[str, ...] | None = None) -> T:
        """params.yaml section `name` as settings dataclass `cls`, every field from the file.

        `cls` is the section's own class (its fields are the section's keys: an unknown key is
        an error), or with `part=True` a small class of the few keys a stage needs from a section
        it shares (e.g. the embedder keys of `evaluate` that the report reads). Either way every
        field must be in the file: a default in the class never stands in for params.yaml.
        `keys` reads only those fields of the section's own class, for a script whose variants
        read different keys of one section (each baseline of stages/generate.py its own of
        `baselines`); the other fields are None, as the class has no defaults (params.yaml is
        their one home) and that variant never reads them: one it did read would fail there,
        not run on a value its DVC stage does not depend on.
        """
        fields = list(keys) if keys is not None else [f.name for f in dataclasses.fields(cls)]
        for key in fields:
            self._check(f"{name}.{key}")
        values = self._values(name)
        missing = [key for key in fields if key not in values]
        if missing:
            raise InputError(f"missing key(s) {', '.join(missing)}", file=f"{self.params_file}:{name}")
        if part or keys is not None:
            values = {key: values[key] for key in fields}
        if keys is not None:
            values = {f.name: None for f in dataclasses.fields(cls)} | values
        return from_dict(cls, values, where=f"{self.params_file}:{name}")

    def _values(self, name: str) -> dict:
        if self._params is None:
            self._params = read_params(self.params_file)
        if name not in self._params:
            raise InputError(f"no section '{name}'", file=self.params_file)
        return self._params[name] or {}

    # ------------------------------------------------------------ paths

    @property
    def data(self) -> Path:
        return Path("data") / self.dataset

    @property
    def reports(self) -> Path:
        return Path("reports") / self.dataset

    @property
    def models(self) -> Path:
        return Path("models") / self.dataset

    @property
    def base_model(self) -> Path:
        """models/base: the base LLM every training and sampling stage starts from."""
        return Path("models") / "base"

    def adapter(self, kind: str, run: str) -> Path:
        """models/<ds>/<kind>/<run>: the adapter that one training run (named by
        kaser.predictor.base_model.run_name) of a training stage writes; kind sft, grpo,
        parastudent, or ablations/<method>."""
        return self.models / kind / run

    @property
    def llm_cache(self) -> Path:
        """This stage's own LLM answer cache, a persistent DVC output: the annotate stage's
        data/<ds>/llm_cache.sqlite; every other stage that may ask the LLM (the judge, cluster
        summaries) data/<ds>/<stage>_llm_cache.sqlite, so no stage writes another's output."""
        name = "llm_cache.sqlite" if self.name == "annotate" else f"{self.name}_llm_cache.sqlite"
        return self.data / name


def usage(main) -> str:
    """usage: python stages/<script>.py <dataset> [<method>], from `main`'s parameters."""
    words = []
    for parameter in inspect.signature(main).parameters.values():
        word = f"<{parameter.name}>"
        words.append(word if parameter.default is inspect.Parameter.empty else f"[{word}]")
    return f"usage: python stages/{Path(sys.argv[0]).name} {' '.join(words)}".rstrip()


def run(main, argv: list[str] | None = None) -> None:
    """Call `main` with the command-line arguments; a wrong count prints the usage line, a
    kaser.InputError one line `<script>: error: ...`, both with exit status 2."""
    args = sys.argv[1:] if argv is None else argv
    parameters = inspect.signature(main).parameters.values()
    required = sum(p.default is inspect.Parameter.empty for p in parameters)
    if not required <= len(args) <= len(parameters):
        print(usage(main), file=sys.stderr)
        raise SystemExit(2)
    exit_on_error(Path(sys.argv[0]).stem, lambda: main(*args))
