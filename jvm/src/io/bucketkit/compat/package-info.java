/**
 * Calls into Spark internals (SparkCompat; SparkRelease, one per jvm/release/<x.y>) and conf broadcasts.
 * May import hashing, layout (order: docs/architecture.md, "JVM packages").
 */
package io.bucketkit.compat;
