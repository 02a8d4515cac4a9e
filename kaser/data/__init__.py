"""The data the pipeline starts from: the contracts of `problems` and `submissions`
(`contracts`), ingestion of released datasets (`ingest`), and the synthetic benchmark with known
truth (`synth`). Stage: `prepare` (stages/prepare.py).
"""
