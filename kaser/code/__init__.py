"""Shared ground for everything that reads or runs code: syntax trees (tree-sitter), the compilers
and the sandbox that runs untrusted programs (students' and the model's) in isolated processes.

Imports nothing from the pipeline's parts above it (data, errors, knowledge, predictor, evaluation).
"""
