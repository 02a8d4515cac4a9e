"""Errors in student code (paper §2.1): annotation of each submission (the static, test-grounded
annotator or an LLM), clustering of the labels into a small vocabulary per problem, and the judge
that tells which of a problem's errors a predicted code makes. Stages: `annotate`, `cluster`.
"""
