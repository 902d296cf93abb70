"""bucketkit's benchmark suite: ``python -m benchmarks.run`` (see benchmarks/common.py)."""
