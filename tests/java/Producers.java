import com.github.luben.zstd.Zstd;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectOutputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.zip.DeflaterOutputStream;
import java.util.zip.GZIPOutputStream;
import net.jpountz.lz4.LZ4BlockOutputStream;
import net.jpountz.lz4.LZ4FrameOutputStream;
import org.xerial.snappy.Snappy;
import org.xerial.snappy.SnappyFramedOutputStream;
import org.xerial.snappy.SnappyOutputStream;

/**
 * Writes a payload the way Java applications put compressed values into blob columns, with the
 * libraries Cassandra ships (snappy-java, lz4-java, zstd-jni) and the JDK, all defaults.
 *
 * <p>Usage: {@code java -cp 'classes:<cassandra lib>/*' Producers <payload> <out-dir> [<payload>
 * <out-dir> ...]}: writes {@code <out-dir>/<producer>.bin} for each producer. Several pairs per
 * run because a JVM start costs more than all the compression. The producers that serialize a
 * java.lang.String are skipped when the payload is not valid UTF-8. Called by
 * tests/java_producers.py.
 */
public final class Producers {
  private interface Producer {
    byte[] produce(byte[] payload, String text) throws IOException;
  }

  private interface StreamWriter {
    void write(OutputStream out) throws IOException;
  }

  private static byte[] collect(StreamWriter writer) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    writer.write(bytes);
    return bytes.toByteArray();
  }

  /** A payload written through a compressing stream; closing it writes the trailer. */
  private interface Wrapper {
    OutputStream wrap(OutputStream out) throws IOException;
  }

  private static byte[] through(Wrapper wrapper, byte[] payload) throws IOException {
    return collect(
        out -> {
          try (OutputStream s = wrapper.wrap(out)) {
            s.write(payload);
          }
        });
  }

  private static byte[] serialized(Object value, boolean gzip) throws IOException {
    return collect(
        out -> {
          // The Couchbase article's pattern: ObjectOutputStream over GZIPOutputStream.
          try (ObjectOutputStream oos =
              new ObjectOutputStream(gzip ? new GZIPOutputStream(out) : out)) {
            oos.writeObject(value);
          }
        });
  }

  private static final Map<String, Producer> PRODUCERS = new LinkedHashMap<>();

  static {
    PRODUCERS.put("snappy_raw", (p, t) -> Snappy.compress(p));
    PRODUCERS.put("snappy_xerial", (p, t) -> through(SnappyOutputStream::new, p));
    PRODUCERS.put("snappy_framed", (p, t) -> through(SnappyFramedOutputStream::new, p));
    PRODUCERS.put("lz4_java_block", (p, t) -> through(LZ4BlockOutputStream::new, p));
    PRODUCERS.put("lz4_frame", (p, t) -> through(LZ4FrameOutputStream::new, p));
    PRODUCERS.put("zstd", (p, t) -> Zstd.compress(p));
    PRODUCERS.put("gzip", (p, t) -> through(GZIPOutputStream::new, p));
    PRODUCERS.put("zlib", (p, t) -> through(DeflaterOutputStream::new, p));
    PRODUCERS.put("java_string", (p, t) -> t == null ? null : serialized(t, false));
    PRODUCERS.put("gzip_java_string", (p, t) -> t == null ? null : serialized(t, true));
    // A non-String object: a reader can only name its class (java.util.ArrayList).
    PRODUCERS.put(
        "gzip_java_object",
        (p, t) -> serialized(new ArrayList<Object>(Arrays.asList("cqlsh-ext", 42)), true));
  }

  private static String strictUtf8(byte[] payload) {
    try {
      return StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(payload))
          .toString();
    } catch (CharacterCodingException e) {
      return null;
    }
  }

  public static void main(String[] args) throws IOException {
    if (args.length == 0 || args.length % 2 != 0) {
      System.err.println("usage: Producers <payload-file> <out-dir> [<payload-file> <out-dir> ...]");
      System.exit(2);
    }
    for (int i = 0; i < args.length; i += 2) {
      byte[] payload = Files.readAllBytes(Paths.get(args[i]));
      String text = strictUtf8(payload);
      Path outDir = Files.createDirectories(Paths.get(args[i + 1]));
      for (Map.Entry<String, Producer> e : PRODUCERS.entrySet()) {
        byte[] out = e.getValue().produce(payload, text);
        if (out != null) {
          Files.write(outDir.resolve(e.getKey() + ".bin"), out);
        }
      }
    }
  }
}
