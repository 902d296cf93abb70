"""The thin Spark layer: the only part of bucketkit that imports pyspark."""
