"""The data the pipeline starts from: the contracts of `problems` and `submissions`
(`contracts`), ingestion of released datasets (`ingest`: CodeWorkout, FalconCode; `progsnap2`:
any ProgSnap2 dialect, with KCs derived by `derived_kcs` where a release has none), and the
synthetic benchmark with known truth (`synth`). Stage: `prepare` (stages/prepare.py).
"""
