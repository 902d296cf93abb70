package io.bucketkit.spark;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;
import org.apache.spark.SparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.util.SerializableConfiguration;

/**
 * One broadcast per distinct Hadoop configuration, shared by the queries that read with it.
 *
 * <p>Spark's file scans broadcast the session's Hadoop configuration once per query (a reader
 * factory's executors need it): serialising and storing ~1,000 settings costs ~4 ms, a large part of a
 * small query's time. A scan here reads with the session's configuration as it was when the table was
 * listed ({@code SessionState.newHadoopConf}: every SQL setting included), which is the same from one
 * query to the next unless a setting changes. So the broadcast of an equal configuration (every key and
 * value equal) is reused; a changed setting is a new configuration and a new broadcast. The last few
 * are kept per Spark application (a session's settings flip between few states: the catalog on and off,
 * a test's setting); the broadcasts of those dropped are left to Spark's cleaner.
 */
public final class ConfBroadcasts {
  private static final int KEPT = 8;
  private static final Map<SparkContext, LinkedHashMap<Map<String, String>, Broadcast<SerializableConfiguration>>>
      BY_CONTEXT = new java.util.WeakHashMap<>();

  private ConfBroadcasts() {}

  public static Broadcast<SerializableConfiguration> of(SparkContext sc, Configuration conf) {
    Map<String, String> key = new HashMap<>();
    for (Map.Entry<String, String> e : conf) {
      key.put(e.getKey(), e.getValue());
    }
    synchronized (BY_CONTEXT) {
      LinkedHashMap<Map<String, String>, Broadcast<SerializableConfiguration>> kept = BY_CONTEXT.computeIfAbsent(sc,
          c -> new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<Map<String, String>, Broadcast<SerializableConfiguration>> e) {
              return size() > KEPT;
            }
          });
      Broadcast<SerializableConfiguration> b = kept.get(key);
      if (b == null || !b.isValid()) {
        b = sc.broadcast(new SerializableConfiguration(new Configuration(conf)),
            scala.reflect.ClassTag$.MODULE$.apply(SerializableConfiguration.class));
        kept.put(key, b);
      }
      return b;
    }
  }
}
