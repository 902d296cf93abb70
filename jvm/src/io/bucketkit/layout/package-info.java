/**
 * A table's files: bucket file names, listings, partitions, kept versions, the manifest; Python: bucketkit.layout.
 * May import hashing (order: docs/architecture.md, "JVM packages").
 */
package io.bucketkit.layout;
