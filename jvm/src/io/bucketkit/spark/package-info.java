/**
 * What Spark and Python call by name: BucketkitCatalog, BucketkitExtensions, the write guard, the driver calls.
 * The top: may import every other package (order: docs/architecture.md, "JVM packages").
 */
package io.bucketkit.spark;
