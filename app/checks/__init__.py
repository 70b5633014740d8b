"""The check language: the names a check sees, expressions over them, explanation templates.

A step's checks, explanations and figures are written in it; the course lint (app.course) checks
them statically and the grader (app.grading) evaluates them. It imports only the simulator's
models, so both can use it without importing each other.
"""
