package io.bucketkit.read;

import io.bucketkit.compat.SparkCompat;

/**
 * The error of a read that must stop (a row in another bucket's file, an unsorted file of a sorted table, a file
 * gone mid-read): Spark's own {@code SparkRuntimeException} of {@code raise_error}, which PySpark raises as
 * {@code pyspark.errors.SparkRuntimeException} with bucketkit's message (an {@code IllegalStateException} reached a
 * Python user as a raw {@code Py4JJavaError}), and which bucketkit's Python-side checks raise too.
 */
public final class ReadFailure {
  private ReadFailure() {}

  public static RuntimeException of(String message, Throwable cause) {
    return SparkCompat.failure(message, cause);
  }

  public static RuntimeException of(String message) {
    return of(message, null);
  }
}
