/**
 * A write's tasks (BucketDataWriter, OrcRowWriter) and its commit (CommitCoordinator); Python: bucketkit.writing.
 * May import hashing, layout, compat, read (order: docs/architecture.md, "JVM packages").
 */
package io.bucketkit.write;
