package io.bucketkit.table;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Locale;

import io.bucketkit.hashing.HiveBucketFunction;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.analysis.UnresolvedAttribute;
import org.apache.spark.sql.catalyst.expressions.BoundReference;
import org.apache.spark.sql.catalyst.expressions.V2ExpressionUtils;
import org.apache.spark.sql.connector.expressions.Expression;
import org.apache.spark.sql.connector.expressions.Literal;
import org.apache.spark.sql.connector.expressions.NamedReference;
import org.apache.spark.sql.connector.expressions.UserDefinedScalarFunc;
import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;

/**
 * What pushed predicates say about a bucketed table: which buckets can hold matching rows
 * ({@code =}, {@code <=>}, {@code IN}, {@code IS NULL} on the bucket column, through AND/OR), and
 * whether a table partition can (predicates on partition columns only, evaluated by Catalyst on
 * the partition's values). Every predicate is still evaluated by Spark after the scan.
 */
final class ScanPredicates {
  private ScanPredicates() {}

  /** The column a reference names (top-level only; Hive's names are case-insensitive), or null. */
  static String column(Expression e) {
    if (!(e instanceof NamedReference)) {
      return null;
    }
    String[] parts = ((NamedReference) e).fieldNames();
    return parts.length == 1 ? parts[0].toLowerCase(Locale.ROOT) : null;
  }

  /**
   * Buckets {@code hive_v<v>_bucket_<y>(k) = b} can match, the predicate of {@code TABLESAMPLE (BUCKET
   * b+1 OUT OF y)} (the rule {@code rules.BucketSample}; {@link HiveBucketFunction#sampledBuckets}), or
   * null: not such a predicate, or not of this table's hash.
   */
  private static BitSet sampled(Expression[] c, HiveBucketedTable t) {
    int f = c[0] instanceof UserDefinedScalarFunc ? 0 : c[1] instanceof UserDefinedScalarFunc ? 1 : -1;
    if (f < 0 || !(c[1 - f] instanceof Literal<?> lit) || !(lit.value() instanceof Integer b)) {
      return null;
    }
    UserDefinedScalarFunc fn = (UserDefinedScalarFunc) c[f];
    HiveBucketFunction named = HiveBucketFunction.forName(fn.name());
    if (named == null || named.numBuckets() < 1 || fn.children().length != 1 || !isBucketColumn(fn.children()[0], t)
        || !fn.name().equals(HiveBucketFunction.nameFor(t.version, t.bucketHiveType, named.numBuckets()))) {
      return null;
    }
    return HiveBucketFunction.sampledBuckets(b, named.numBuckets(), t.buckets);
  }

  /** Whether {@code e} is the table's {@code _bucket} metadata column. */
  private static boolean isBucketId(Expression e, HiveBucketedTable t) {
    return HiveBucketedTable.BUCKET_ID.equals(column(e)) && t.offersBucketId();
  }

  /** The buckets {@code _bucket} may equal, one of these literals (null: one is not an int literal). */
  private static BitSet bucketIds(Expression[] values, HiveBucketedTable t) {
    BitSet out = new BitSet();
    for (Expression v : values) {
      if (!(v instanceof Literal<?> lit) || (lit.value() != null && !(lit.value() instanceof Integer))) {
        return null;
      }
      if (lit.value() instanceof Integer b && b >= 0 && b < t.buckets) {
        out.set(b);
      }
    }
    return out;
  }

  /** Buckets the conjunction of {@code predicates} can match (null: all). */
  static BitSet buckets(Predicate[] predicates, HiveBucketedTable t) {
    BitSet out = t.bucketColumn == null ? rowBuckets(predicates, t) : null;
    for (Predicate p : predicates) {
      BitSet b = buckets(p, t);
      if (b != null) {
        if (out == null) {
          out = b;
        } else {
          out.and(b);
        }
      }
    }
    return out;
  }

  private static BitSet buckets(Expression e, HiveBucketedTable t) {
    if (!(e instanceof Predicate)) {
      return null;
    }
    Predicate p = (Predicate) e;
    Expression[] c = p.children();
    switch (p.name()) {
      case "AND": {
        BitSet l = buckets(c[0], t), r = buckets(c[1], t);
        if (l == null) {
          return r;
        }
        if (r != null) {
          l.and(r);
        }
        return l;
      }
      case "OR": {
        BitSet l = buckets(c[0], t), r = buckets(c[1], t);
        if (l == null || r == null) {
          return null;
        }
        l.or(r);
        return l;
      }
      case "IS_NULL":
        return isBucketColumn(c[0], t) ? one(t.bucketOf(null)) : null;
      case "=":
      case "<=>": {
        BitSet sampled = sampled(c, t);
        if (sampled != null) {
          return sampled;
        }
        if (p.name().equals("=") && (isBucketId(c[0], t) || isBucketId(c[1], t))) {
          return bucketIds(new Expression[] {isBucketId(c[0], t) ? c[1] : c[0]}, t);
        }
        int ref = isBucketColumn(c[0], t) ? 0 : isBucketColumn(c[1], t) ? 1 : -1;
        if (ref < 0 || !isLiteralOf(c[1 - ref], t)) {
          return null;
        }
        Object v = ((Literal<?>) c[1 - ref]).value();
        if (v == null) {  // k = NULL is never true; k <=> NULL is k IS NULL
          return p.name().equals("=") ? new BitSet() : one(t.bucketOf(null));
        }
        return one(t.bucketOf(v));
      }
      case "IN": {
        if (isBucketId(c[0], t)) {
          return bucketIds(java.util.Arrays.copyOfRange(c, 1, c.length), t);
        }
        if (!isBucketColumn(c[0], t)) {
          return null;
        }
        BitSet out = new BitSet();
        for (int i = 1; i < c.length; i++) {
          if (!isLiteralOf(c[i], t)) {
            return null;
          }
          Object v = ((Literal<?>) c[i]).value();
          if (v != null) {  // NULL in an IN list matches no row
            out.set(t.bucketOf(v));
          }
        }
        return out;
      }
      default:
        return null;
    }
  }

  private static BitSet one(int bucket) {
    BitSet b = new BitSet();
    b.set(bucket);
    return b;
  }

  private static boolean isBucketColumn(Expression e, HiveBucketedTable t) {
    return t.bucketColumn != null && t.bucketColumn.equals(column(e));
  }

  /** The most key combinations {@link #rowBuckets} hashes (an IN list on each column multiplies them). */
  static final int MAX_KEYS = 4096;

  /**
   * Buckets a table bucketed by several columns can hold rows of, where the conjunction of
   * {@code predicates} pins every bucket column to a few values ({@code =}, {@code <=>}, {@code IN},
   * {@code IS NULL}, each on one column, AND-ed): each combination's row hash, Hive's
   * {@code h = 31 * h + hash(c)}. Null: a column is not pinned, or more than {@link #MAX_KEYS} combinations.
   */
  private static BitSet rowBuckets(Predicate[] predicates, HiveBucketedTable t) {
    List<Expression> conjuncts = new ArrayList<>();
    for (Predicate p : predicates) {
      conjuncts(p, conjuncts);
    }
    List<java.util.Set<Object>> pinned = new ArrayList<>();
    t.bucketColumns.forEach(c -> pinned.add(null));
    for (Expression x : conjuncts) {
      if (!(x instanceof Predicate e)) {
        continue;
      }
      Expression[] c = e.children();
      int col = c.length == 0 ? -1 : t.bucketColumns.indexOf(column(c[0]));
      int other = 1;
      if (col < 0 && c.length == 2 && (e.name().equals("=") || e.name().equals("<=>"))) {
        col = t.bucketColumns.indexOf(column(c[1]));
        other = 0;
      }
      if (col < 0) {
        continue;
      }
      java.util.Set<Object> values = new java.util.HashSet<>();
      switch (e.name()) {
        case "IS_NULL" -> values.add(null);
        case "=", "<=>" -> {
          if (!isLiteralOf(c[other], t.bucketTypes.get(col))) {
            continue;
          }
          Object v = ((Literal<?>) c[other]).value();
          if (v != null || e.name().equals("<=>")) {  // k = NULL is never true; k <=> NULL is k IS NULL
            values.add(v);
          }
        }
        case "IN" -> {
          boolean literals = true;
          for (int i = 1; i < c.length; i++) {
            literals &= isLiteralOf(c[i], t.bucketTypes.get(col));
            if (literals && ((Literal<?>) c[i]).value() != null) {  // NULL in an IN list matches no row
              values.add(((Literal<?>) c[i]).value());
            }
          }
          if (!literals) {
            continue;
          }
        }
        default -> {
          continue;
        }
      }
      if (pinned.get(col) != null) {
        values.retainAll(pinned.get(col));
      }
      pinned.set(col, values);
    }
    long combinations = 1;
    for (java.util.Set<Object> values : pinned) {
      if (values == null) {
        return null;
      }
      combinations *= values.size();
      if (combinations > MAX_KEYS) {
        return null;
      }
    }
    BitSet out = new BitSet();
    addCombinations(pinned, 0, new Object[pinned.size()], t, out);
    return out;
  }

  private static void addCombinations(List<java.util.Set<Object>> pinned, int col, Object[] row, HiveBucketedTable t,
                                      BitSet out) {
    if (col == row.length) {
      out.set(t.bucketOfRow(row));
      return;
    }
    for (Object v : pinned.get(col)) {
      row[col] = v;
      addCombinations(pinned, col + 1, row, t, out);
    }
  }

  /** {@code e} split at its top-level ANDs into {@code out}. */
  private static void conjuncts(Expression e, List<Expression> out) {
    if (e instanceof Predicate p && p.name().equals("AND")) {
      conjuncts(p.children()[0], out);
      conjuncts(p.children()[1], out);
    } else {
      out.add(e);
    }
  }

  // A literal of another type would be hashed as the wrong type: no pruning from it.
  private static boolean isLiteralOf(Expression e, HiveBucketedTable t) {
    return isLiteralOf(e, t.bucketType);
  }

  private static boolean isLiteralOf(Expression e, DataType type) {
    return e instanceof Literal && type != null && ((Literal<?>) e).dataType().equals(type);
  }

  /** Whether every column {@code p} references is one of {@code schema}'s. */
  static boolean onlyReferences(Predicate p, StructType schema) {
    for (NamedReference r : p.references()) {
      String c = column(r);
      if (c == null || !fieldNames(schema).contains(c)) {
        return false;
      }
    }
    return true;
  }

  static List<String> fieldNames(StructType schema) {
    return java.util.Arrays.stream(schema.fieldNames()).map(n -> n.toLowerCase(Locale.ROOT)).toList();
  }

  /** {@code p} as a Catalyst expression over a row of {@code schema}, or null when Spark cannot convert it. */
  static org.apache.spark.sql.catalyst.expressions.Expression bind(Predicate p, StructType schema) {
    scala.Option<org.apache.spark.sql.catalyst.expressions.Expression> converted = V2ExpressionUtils.toCatalyst(p);
    if (converted.isEmpty()) {
      return null;
    }
    List<String> names = fieldNames(schema);
    return replace(converted.get(), UnresolvedAttribute.class, a -> {
      int i = names.indexOf(a.name().toLowerCase(Locale.ROOT));
      return new BoundReference(i, schema.fields()[i].dataType(), true);
    });
  }

  /**
   * A predicate bound to partition schema {@code schema} ({@link #bind}) with its columns named
   * instead: what the metastore's partition pruning takes ({@code ExternalCatalog.listPartitionsByFilter}).
   */
  static org.apache.spark.sql.catalyst.expressions.Expression named(
      org.apache.spark.sql.catalyst.expressions.Expression bound, StructType schema) {
    return replace(bound, BoundReference.class, r -> {
      org.apache.spark.sql.types.StructField f = schema.fields()[r.ordinal()];
      return new org.apache.spark.sql.catalyst.expressions.AttributeReference(f.name(), f.dataType(), true,
          org.apache.spark.sql.types.Metadata.empty(),
          org.apache.spark.sql.catalyst.expressions.NamedExpression$.MODULE$.newExprId(),
          scala.collection.immutable.List$.MODULE$.empty());
    });
  }

  /** {@code e} with every sub-expression of class {@code kind} replaced by {@code f} of it. */
  private static <T> org.apache.spark.sql.catalyst.expressions.Expression replace(
      org.apache.spark.sql.catalyst.expressions.Expression e, Class<T> kind,
      java.util.function.Function<T, org.apache.spark.sql.catalyst.expressions.Expression> f) {
    return e.transform(new scala.runtime.AbstractPartialFunction<
        org.apache.spark.sql.catalyst.expressions.Expression, org.apache.spark.sql.catalyst.expressions.Expression>() {
      @Override
      public boolean isDefinedAt(org.apache.spark.sql.catalyst.expressions.Expression x) {
        return kind.isInstance(x);
      }

      @Override
      public org.apache.spark.sql.catalyst.expressions.Expression apply(
          org.apache.spark.sql.catalyst.expressions.Expression x) {
        return f.apply(kind.cast(x));
      }
    });
  }

  /** Whether a partition with values {@code row} may hold rows matching every bound predicate. */
  static boolean mayMatch(List<org.apache.spark.sql.catalyst.expressions.Expression> bound, InternalRow row) {
    for (org.apache.spark.sql.catalyst.expressions.Expression e : bound) {
      Object result;
      try {
        result = e.eval(row);
      } catch (RuntimeException error) {  // e.g. an ANSI cast error: Spark's own filter will say so; keep the partition
        continue;
      }
      if (!Boolean.TRUE.equals(result)) {
        return false;
      }
    }
    return true;
  }

  /**
   * {@code p} as a data filter for the file reader (which skips stripes and row groups; the query still applies the
   * exact predicate), or null where any part of it has no V1 form: never one side of an {@code OR}. Spark's
   * {@code PredicateUtils.toV1} converts an {@code OR} whose other side it cannot convert (an arithmetic or function
   * operand, a boolean comparison) to the side it can, and a reader given {@code v + 1 > 3 OR s IS NULL} as
   * {@code s IS NULL} skipped the row groups of rows the query keeps. So {@code AND}, {@code OR} and {@code NOT} are
   * converted here, each whole, and only the leaves by Spark; an {@code IN} leaf loses its NULLs (ORC's reader cannot
   * take a NULL in an {@code IN}, it fails the task, and {@code k IN (1, NULL)} is true exactly where
   * {@code k IN (1)} is; elsewhere it is NULL, never false, so no row the query keeps is skipped, under {@code NOT}
   * too).
   */
  static org.apache.spark.sql.sources.Filter readerFilter(Predicate p) {
    Expression[] c = p.children();
    switch (p.name()) {
      case "AND":
      case "OR": {
        org.apache.spark.sql.sources.Filter l = c[0] instanceof Predicate a ? readerFilter(a) : null;
        org.apache.spark.sql.sources.Filter r = c[1] instanceof Predicate b ? readerFilter(b) : null;
        if (l == null || r == null) {
          return null;
        }
        return p.name().equals("AND") ? new org.apache.spark.sql.sources.And(l, r)
            : new org.apache.spark.sql.sources.Or(l, r);
      }
      case "NOT": {
        org.apache.spark.sql.sources.Filter child = c[0] instanceof Predicate a ? readerFilter(a) : null;
        return child == null ? null : new org.apache.spark.sql.sources.Not(child);
      }
      default: {
        scala.Option<org.apache.spark.sql.sources.Filter> v1 =
            org.apache.spark.sql.internal.connector.PredicateUtils.toV1(p);
        if (v1.isEmpty()) {
          return null;
        }
        if (v1.get() instanceof org.apache.spark.sql.sources.In in) {
          Object[] values = java.util.Arrays.stream(in.values()).filter(java.util.Objects::nonNull).toArray();
          return values.length == in.values().length ? in : new org.apache.spark.sql.sources.In(in.attribute(), values);
        }
        return v1.get();
      }
    }
  }
}
