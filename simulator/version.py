"""The simulator's version: part of every result, and of every cache key of a result."""

SIMULATOR_VERSION = "1.15.0"
"""Bumped whenever the same design, scenario and seed may give a different result."""
