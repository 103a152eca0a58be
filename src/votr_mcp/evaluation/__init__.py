"""Metrics and the benchmark harness."""
