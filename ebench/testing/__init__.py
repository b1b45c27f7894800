"""Helpers for testing ebench and for benchmarking it: a fake OpenAI-compatible server."""
