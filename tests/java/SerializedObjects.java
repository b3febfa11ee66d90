import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectOutputStream;
import java.io.Serializable;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.DayOfWeek;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Date;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Hashtable;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.LinkedList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.zip.GZIPOutputStream;

/**
 * Writes JDK object graphs with ObjectOutputStream, the way services cache or store them in blob
 * columns: {@code java -cp classes SerializedObjects <out-dir>} writes {@code <name>.ser} for each
 * (and {@code gzip_<name>.ser} for a few, through GZIPOutputStream). Called by
 * tests/java_producers.py.
 */
public final class SerializedObjects {
  /** An application's own class: a reader can show its fields, never run it. */
  public static final class Order implements Serializable {
    private static final long serialVersionUID = 1L;
    long id = 1001;
    String customer = "customer-07";
    double total = 99.5;
    boolean paid = true;
    List<String> items = new ArrayList<>(Arrays.asList("book", "pen"));
    DayOfWeek day = DayOfWeek.MONDAY;
  }

  /** A class with its own writeObject: extra data after its fields. */
  public static final class Versioned implements Serializable {
    private static final long serialVersionUID = 2L;
    int version = 3;

    private void writeObject(java.io.ObjectOutputStream out) throws IOException {
      out.defaultWriteObject();
      out.writeUTF("extra");
      out.writeObject("tail");
    }
  }

  private static byte[] serialize(Object value, boolean gzip) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream out =
        new ObjectOutputStream(gzip ? new GZIPOutputStream(bytes) : bytes)) {
      out.writeObject(value);
    }
    return bytes.toByteArray();
  }

  public static void main(String[] args) throws IOException {
    Path dir = Files.createDirectories(Paths.get(args[0]));
    Map<String, Object> values = new LinkedHashMap<>();
    values.put("integer", 42);
    values.put("long", -7L);
    values.put("double", 2.5d);
    values.put("boolean", Boolean.TRUE);
    values.put("array_list", new ArrayList<Object>(Arrays.asList("a", 1, 2.5, null, true)));
    LinkedHashMap<String, Object> linked = new LinkedHashMap<>();
    linked.put("id", 7);
    linked.put("name", "widget");
    linked.put("tags", new ArrayList<>(Arrays.asList("x", "y")));
    linked.put("price", new BigDecimal("19.99"));
    values.put("linked_hash_map", linked);
    HashMap<Integer, String> hash = new HashMap<>();
    hash.put(1, "one");
    hash.put(2, "two");
    values.put("hash_map_int_keys", hash);
    values.put("tree_map", new TreeMap<>(Map.of("b", 2L, "a", 1L)));
    values.put("hash_set", new HashSet<>(Arrays.asList("only")));
    values.put("linked_hash_set", new LinkedHashSet<>(Arrays.asList("x", "y", "z")));
    values.put("tree_set", new TreeSet<>(Arrays.asList(3, 1, 2)));
    values.put("linked_list", new LinkedList<>(Arrays.asList(1, 2)));
    values.put("array_deque", new ArrayDeque<>(Arrays.asList("p", "q")));
    values.put("hashtable", new Hashtable<>(Map.of("k", "v")));
    values.put("concurrent_hash_map", new ConcurrentHashMap<>(Map.of("k", 1)));
    values.put("list_of", List.of("i", "j"));
    values.put("map_of", Map.of("m", 1));
    values.put("set_of", Set.of(5));
    values.put("unmodifiable_list", Collections.unmodifiableList(new ArrayList<>(List.of(1, 2))));
    values.put("arrays_as_list", Arrays.asList("r", "s"));
    values.put("int_array", new int[] {1, 2, 3});
    values.put("string_array", new String[] {"u", "v"});
    values.put("byte_array", new byte[] {0, 1, (byte) 0xff});
    values.put("enum", DayOfWeek.FRIDAY);
    values.put("date", new Date(1700000000123L));
    values.put("uuid", UUID.fromString("123e4567-e89b-12d3-a456-426614174000"));
    values.put("big_integer", new BigInteger("123456789012345678901234567890"));
    values.put("big_decimal_40_digits", new BigDecimal("1234567890123456789012345678901234.567890"));
    values.put("big_decimal_exponent", new BigDecimal("1.5E+40"));
    values.put("order", new Order());
    values.put("versioned", new Versioned());
    List<Object> cyclic = new ArrayList<>();
    cyclic.add("self");
    cyclic.add(cyclic);
    values.put("cyclic_list", cyclic);
    List<String> shared = new ArrayList<>(List.of("s"));
    values.put("shared_list", new ArrayList<Object>(Arrays.asList(shared, shared)));
    // Hostile shapes a reader must stop on: nesting deeper than any record, and a list that
    // holds the same list twice, 40 levels down (2^40 elements if walked naively).
    List<Object> deep = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      List<Object> outer = new ArrayList<>();
      outer.add(deep);
      deep = outer;
    }
    values.put("deep_nesting", deep);
    List<Object> bomb = new ArrayList<>(List.of("leaf"));
    for (int i = 0; i < 40; i++) {
      bomb = new ArrayList<Object>(Arrays.asList(bomb, bomb));
    }
    values.put("shared_bomb", bomb);
    for (Map.Entry<String, Object> e : values.entrySet()) {
      Files.write(dir.resolve(e.getKey() + ".ser"), serialize(e.getValue(), false));
    }
    for (String name : List.of("linked_hash_map", "order", "array_list")) {
      Files.write(dir.resolve("gzip_" + name + ".ser"), serialize(values.get(name), true));
    }
  }
}
