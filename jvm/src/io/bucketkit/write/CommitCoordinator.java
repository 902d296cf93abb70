package io.bucketkit.write;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.bucketkit.compat.SparkCompat;
import org.apache.spark.sql.classic.SparkSession;

/**
 * The Python process that commits a SQL INSERT ({@code python -m bucketkit.writing.sqlcommit}): it owns the
 * write's journal and runs bucketkit's commit protocol, so a SQL INSERT and {@code bucketkit.write}
 * share one implementation of staging, naming, the directory switch and recovery. Started when
 * Spark plans the write's batch, asked to commit or abort when the job ends; if the driver dies,
 * the process reads the end of its input and rolls the write back.
 */
public final class CommitCoordinator implements AutoCloseable {
  static final String PYTHON = "spark.bucketkit.python";
  /** Where a commit keeps the table's versions (auto, inside, beside: bucketkit.writing.commit.LAYOUT_CONF). */
  public static final String LAYOUT = "spark.bucketkit.commit.layout";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final TypeReference<Map<String, Object>> MAP = new TypeReference<>() {};

  private final Process process;
  private final Writer in;
  private final BufferedReader out;
  private final String what;
  public Map<String, Object> begun;  // the reply to the write's request: staging directory, recovered partitions

  private CommitCoordinator(Process process, String what) {
    this.process = process;
    this.what = what;
    this.in = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
    this.out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
  }

  /**
   * {@code spark.bucketkit.python} names a program the driver runs: it is static, read from the
   * application's configuration only ({@code SparkConf}: spark-submit, spark-defaults.conf, the
   * session builder) and registered so that Spark refuses a runtime {@code SET} of it. A SQL user of a
   * shared server (Thrift, Connect) cannot make the driver run a program of theirs.
   */
  public static void registerStaticSettings() {
    SparkCompat.registerStatic(PYTHON, "The Python (with bucketkit installed) that commits INSERTs on the driver. "
        + "Static: a runtime SET would let any SQL user make the driver run a program.");
  }

  /**
   * The Python that runs bucketkit: {@code spark.bucketkit.python}, else PySpark's driver Python, else
   * python3 — from the application's static configuration and environment, never the session's
   * runtime settings.
   */
  static String python(SparkSession spark) {
    org.apache.spark.SparkConf app = spark.sparkContext().getConf();
    String conf = app.get(PYTHON, "");
    if (!conf.isEmpty()) {
      return conf;
    }
    for (String env : new String[] {"PYSPARK_DRIVER_PYTHON", "PYSPARK_PYTHON"}) {
      String v = System.getenv(env);
      if (v != null && !v.isEmpty()) {
        return v;
      }
    }
    String pyspark = app.get("spark.pyspark.driver.python", app.get("spark.pyspark.python", ""));
    return pyspark.isEmpty() ? "python3" : pyspark;
  }

  /* One started, idle process per driver, so that Python's start (~0.7 s of imports) overlaps the
     query's shuffle instead of delaying the write. It waits for a request; if none ever comes, it
     exits when the driver does (end of its input). */
  private static Process spare;
  private static String spareOf;

  private static Process start(String python) throws IOException {
    return new ProcessBuilder(python, "-m", "bucketkit.writing.sqlcommit").redirectError(ProcessBuilder.Redirect.INHERIT).start();
  }

  /** Start the next write's process now (while Spark runs the query); errors surface in {@link #begin}. */
  public static synchronized void warm(SparkSession spark) {
    String python = python(spark);
    if (spare == null || !spare.isAlive() || !python.equals(spareOf)) {
      try {
        spare = start(python);
        spareOf = python;
      } catch (IOException e) {
        spare = null;
      }
    }
  }

  private static synchronized Process take(String python) throws IOException {
    Process p = spare;
    spare = null;
    if (p != null && p.isAlive() && python.equals(spareOf)) {
      return p;
    }
    if (p != null) {
      p.destroy();
    }
    return start(python);
  }

  /** Begin the write described by {@code request} in a (warm or new) process; returns once it is begun. */
  public static CommitCoordinator begin(SparkSession spark, String what, Map<String, Object> request) {
    String python = python(spark);
    Process p;
    try {
      p = take(python);
    } catch (IOException e) {
      throw SparkCompat.failure("bucketkit: " + what + " commits through Python with bucketkit installed; "
          + "starting '" + python + "' failed (" + e.getMessage() + "); set " + PYTHON + " to that Python", e);
    }
    try {
      CommitCoordinator c = new CommitCoordinator(p, what);
      c.begun = c.ask(request);
      return c;
    } catch (RuntimeException e) {
      p.destroyForcibly();
      throw e;
    } catch (IOException e) {
      p.destroyForcibly();
      throw SparkCompat.failure("bucketkit: " + what + ": talking to '" + python + " -m bucketkit.writing.sqlcommit' "
          + "failed: " + e.getMessage(), e);
    }
  }

  private Map<String, Object> ask(Map<String, Object> message) throws IOException {
    in.write(JSON.writeValueAsString(message));
    in.write('\n');
    in.flush();
    String line = out.readLine();
    if (line == null) {
      throw SparkCompat.failure("bucketkit: " + what + ": the commit process (python -m bucketkit.writing.sqlcommit) "
          + "exited without an answer; its error is in the driver's stderr (is bucketkit installed in that Python?)");
    }
    Map<String, Object> reply = JSON.readValue(line, MAP);
    if (reply.containsKey("error")) {
      throw SparkCompat.failure("bucketkit: " + what + " failed: " + reply.get("error") + ": " + reply.get("message"));
    }
    return reply;
  }

  public String staging() {
    return (String) begun.get("staging");
  }

  @SuppressWarnings("unchecked")
  public static List<Map<String, String>> partitions(Map<String, Object> reply, String key) {
    return (List<Map<String, String>>) reply.getOrDefault(key, List.of());
  }

  /** Name the staged files and switch them in; returns what the commit did (rows, files, partitions). */
  public Map<String, Object> commit() {
    try {
      return ask(Map.of("commit", true));
    } catch (IOException e) {
      throw SparkCompat.failure("bucketkit: " + what + ": the commit process failed: " + e.getMessage(), e);
    } finally {
      close();
    }
  }

  /** Discard the staged files (the process does it; ending its input does it too). */
  public void abort() {
    try {
      ask(Map.of("abort", true));
    } catch (IOException | RuntimeException e) {
      // the process rolls back on its own when its input ends (closed below)
    } finally {
      close();
    }
  }

  /**
   * Ends the conversation without waiting for the process to exit: after a commit it deletes the
   * switched-out version once readers had their grace period ({@code bucketkit.writing.commit.RETIRE_GRACE}),
   * which the INSERT need not wait for.
   */
  @Override
  public void close() {
    try {
      in.close();
    } catch (IOException e) {
      process.destroy();
    }
  }
}
