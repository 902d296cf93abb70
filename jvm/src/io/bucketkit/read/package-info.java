/**
 * What a scan's tasks read with: rows' buckets, bucket and sort checks, _bucket fills, the TEXTFILE reader, KeyedScan.
 * May import hashing, layout, compat (order: docs/architecture.md, "JVM packages").
 */
package io.bucketkit.read;
