/**
 * HiveBucketedTable (Spark's DSv2 table), its verdict, scan and write; Python: bucketkit.table, trust, pruning.
 * May import hashing, layout, compat, read, write (order: docs/architecture.md, "JVM packages").
 */
package io.bucketkit.table;
