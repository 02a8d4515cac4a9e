"""DVC stage `cluster@<dataset>`: raw error labels -> error vocabulary and per-problem lists.

    python stages/cluster.py synthetic-java

Reads data/<ds>/annotations.parquet; writes data/<ds>/error_labels.parquet (raw label ->
cluster label), submission_errors.parquet (each submission's cluster labels) and
problem_errors.json (each problem's most frequent errors). Settings: params.yaml `cluster`.
"""

import sys
from pathlib import Path

from kaser.errors.cluster import (ClusterConfig, cluster_annotations, read_annotations, summariser,
                           write_cluster_outputs)
from kaser.config import load_section


def main(dataset: str) -> None:
    folder = Path("data") / dataset
    cfg = load_section("params.yaml", "cluster", ClusterConfig)
    annotations = read_annotations(folder)
    with summariser(cfg, "params.yaml", folder) as summarise:
        outputs = cluster_annotations(annotations, cfg, summarise)
    write_cluster_outputs(folder, *outputs)


if __name__ == "__main__":
    main(sys.argv[1])
