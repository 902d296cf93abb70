/**
 * Hive bucketing's hash (HiveHash), its bucket functions and bucket-id column; Python: bucketkit.hashing.
 * Imports no other bucketkit package: the lowest (order: docs/architecture.md, "JVM packages").
 */
package io.bucketkit.hashing;
