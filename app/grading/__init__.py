"""Grading: a design's checks and scenarios per step, the result of contract 3, and its formats.

The check language the grader evaluates is app.checks. Submodules are imported where used
(``app.grading.grader``, ``app.grading.reports``).
"""
