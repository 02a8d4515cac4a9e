"""DVC stage `cluster@<dataset>`: raw error labels -> error vocabulary and per-problem lists.

    python stages/cluster.py synthetic-python

Reads data/<ds>/annotations.parquet; writes data/<ds>/error_labels.parquet (raw label ->
cluster label), submission_errors.parquet (each submission's cluster labels) and
problem_errors.json (each problem's most frequent errors). Settings: params.yaml `cluster`, and
for `summary_backend: openai` `llm` and `llm_client`; the LLM's summaries are cached in the
stage's own data/<ds>/cluster_llm_cache.sqlite (a persistent output, empty with the static
summary), never in the annotate stage's llm_cache.sqlite.
"""

from _runner import Stage, run
from kaser.errors.cluster import (ClusterParams, cluster_annotations, read_annotations, summariser,
                                  write_cluster_outputs)
from kaser.llm import LLMClientParams, LLMParams, ResponseCache

PARAMS = ("cluster", "llm")


def main(dataset: str) -> None:
    stage = Stage("cluster", dataset, PARAMS)
    cfg = stage.section("cluster", ClusterParams)
    llm, client = None, None
    if cfg.summary_backend == "openai":
        llm, client = stage.section("llm", LLMParams), stage.section("llm_client", LLMClientParams)
    annotations = read_annotations(stage.data)
    ResponseCache(stage.llm_cache).close()
    with summariser(cfg, llm, client, stage.llm_cache) as summarise:
        outputs = cluster_annotations(annotations, cfg, summarise)
    write_cluster_outputs(stage.data, *outputs)


if __name__ == "__main__":
    run(main)
