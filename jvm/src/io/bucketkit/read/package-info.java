/**
 * What a scan's tasks read with: bucket and sort-order checks, the TEXTFILE reader, the keyed-scan interface.
 * May import hashing, layout, compat (order: docs/architecture.md, "JVM packages").
 */
package io.bucketkit.read;
