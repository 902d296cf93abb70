/**
 * bucketkit's planner rules: joins, aggregates and writes in buckets; packed scans and shuffles.
 * May import every package but spark (order: docs/architecture.md, "JVM packages").
 */
package io.bucketkit.rules;
