/**
 * A Hive ACID table in Spark SQL, its snapshot read by bucketkit's Python data source; Python: bucketkit.acid.
 * May import hashing, layout, compat, read, write, table (order: docs/architecture.md, "JVM packages").
 */
package io.bucketkit.acid;
