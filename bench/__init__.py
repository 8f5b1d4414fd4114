"""Benchmarks: each `bench/bench_*.py` has `main(argv) -> dict` and prints JSON with ratios to a
baseline measured in the same run (machines here are shared and noisy)."""
