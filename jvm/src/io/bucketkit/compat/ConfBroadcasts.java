package io.bucketkit.compat;

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
  private static final Map<SparkContext, LinkedHashMap<Object, Broadcast<SerializableConfiguration>>>
      BY_CONTEXT = new java.util.WeakHashMap<>();
  // Configuration's own settings table (a protected method): compared as it is, where iterating the
  // configuration copies its ~1,000 settings into a new map (~1 ms a query)
  private static final java.lang.reflect.Method PROPS = props();

  private ConfBroadcasts() {}

  private static java.lang.reflect.Method props() {
    try {
      java.lang.reflect.Method m = Configuration.class.getDeclaredMethod("getProps");
      m.setAccessible(true);
      return m;
    } catch (ReflectiveOperationException | RuntimeException e) {
      return null;
    }
  }

  /**
   * Every key and value of {@code conf}, as a key equal to another configuration's exactly when they
   * are equal: its own table (looked up as it is, copied when kept), or a copy.
   */
  private static Object settings(Configuration conf) {
    if (PROPS != null) {
      try {
        return PROPS.invoke(conf);
      } catch (ReflectiveOperationException | RuntimeException e) {
        // below
      }
    }
    Map<String, String> key = new HashMap<>();
    for (Map.Entry<String, String> e : conf) {
      key.put(e.getKey(), e.getValue());
    }
    return key;
  }

  public static Broadcast<SerializableConfiguration> of(SparkContext sc, Configuration conf) {
    Object key = settings(conf);
    synchronized (BY_CONTEXT) {
      LinkedHashMap<Object, Broadcast<SerializableConfiguration>> kept = BY_CONTEXT.computeIfAbsent(sc,
          c -> new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<Object, Broadcast<SerializableConfiguration>> e) {
              return size() > KEPT;
            }
          });
      Broadcast<SerializableConfiguration> b = kept.get(key);
      if (b == null || !b.isValid()) {
        b = sc.broadcast(new SerializableConfiguration(new Configuration(conf)),
            scala.reflect.ClassTag$.MODULE$.apply(SerializableConfiguration.class));
        kept.put(key instanceof java.util.Properties p ? p.clone() : key, b);
      }
      return b;
    }
  }
}
