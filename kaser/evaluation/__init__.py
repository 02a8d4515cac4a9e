"""Evaluation (paper §4): scoring predictions with the paper's metrics (`scoring`), summaries and
paired tests over folds (`summary`), and the readable report with its figures (`report`,
`figures`). Stages: `evaluate`, `sweep`, `report`.
"""
