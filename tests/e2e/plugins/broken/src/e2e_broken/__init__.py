"""A plugin whose module fails on import."""

raise ImportError("e2e_broken needs a library that is not installed")
