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
 *
 * <p>A reader may write into the configuration it is handed: Spark's ORC reader sets the schema it reads
 * ({@code orc.mapred.input.schema}) in the broadcast configuration, then copies it for the file. The
 * tasks of one executor (every task, in local mode) share the broadcast's one object, so two scans reading
 * different columns through one configuration could each read with the other's schema (a column read as
 * NULL, or "Index 2 out of bounds for length 2"). A broadcast is therefore shared only within a {@code scope}: the readers that write
 * the same values into it (for ORC, the same schemas read).
 */
public final class ConfBroadcasts {
  private static final int KEPT = 8;
  private static final Map<SparkContext, LinkedHashMap<Key, Broadcast<SerializableConfiguration>>>
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

  /** The key of a kept broadcast: the configuration's settings, and the scope sharing it. */
  private record Key(Object settings, String scope) {
    Key kept() {
      return new Key(settings instanceof java.util.Properties p ? p.clone() : settings, scope);
    }
  }

  /**
   * The broadcast of {@code conf} for the readers of one {@code scope}: those that write the same values into
   * the configuration they read with (see above).
   */
  public static Broadcast<SerializableConfiguration> of(SparkContext sc, Configuration conf, String scope) {
    Key key = new Key(settings(conf), scope);
    synchronized (BY_CONTEXT) {
      LinkedHashMap<Key, Broadcast<SerializableConfiguration>> kept = BY_CONTEXT.computeIfAbsent(sc,
          c -> new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<Key, Broadcast<SerializableConfiguration>> e) {
              return size() > KEPT;
            }
          });
      Broadcast<SerializableConfiguration> b = kept.get(key);
      if (b == null || !b.isValid()) {
        b = sc.broadcast(new SerializableConfiguration(new Configuration(conf)),
            scala.reflect.ClassTag$.MODULE$.apply(SerializableConfiguration.class));
        kept.put(key.kept(), b);
      }
      return b;
    }
  }
}
