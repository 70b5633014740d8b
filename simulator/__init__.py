"""designlab's discrete-event simulator of durable multi-agent workflows (no web imports)."""

SIMULATOR_VERSION = "1.0.0"

__all__ = ["SIMULATOR_VERSION"]
