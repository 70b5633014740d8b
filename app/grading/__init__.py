"""Grading: check expressions and explanations, the result of contract 3, and its formats.

Submodules are imported where used (``app.grading.grader``, ``app.grading.expressions``) so that
the course lint can load the expression rules without loading the grader.
"""
