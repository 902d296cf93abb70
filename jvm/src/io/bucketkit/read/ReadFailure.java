package io.bucketkit.read;

import org.apache.spark.QueryContext;
import org.apache.spark.SparkRuntimeException;

/**
 * The error of a read that must stop (a row in another bucket's file, an unsorted file of a sorted table, a file
 * gone mid-read): Spark's own {@code SparkRuntimeException} of {@code raise_error}, which PySpark raises as
 * {@code pyspark.errors.SparkRuntimeException} with bucketkit's message (an {@code IllegalStateException} reached a
 * Python user as a raw {@code Py4JJavaError}), and which bucketkit's Python-side checks raise too.
 */
public final class ReadFailure {
  private ReadFailure() {}

  public static RuntimeException of(String message, Throwable cause) {
    return new SparkRuntimeException("USER_RAISED_EXCEPTION",
        new scala.collection.immutable.Map.Map1<>("errorMessage", message), cause, new QueryContext[0], "");
  }

  public static RuntimeException of(String message) {
    return of(message, null);
  }
}
