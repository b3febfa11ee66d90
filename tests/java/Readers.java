import com.github.luben.zstd.Zstd;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.ObjectInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.zip.GZIPInputStream;
import java.util.zip.InflaterInputStream;
import net.jpountz.lz4.LZ4BlockInputStream;
import net.jpountz.lz4.LZ4FrameInputStream;
import org.xerial.snappy.Snappy;
import org.xerial.snappy.SnappyFramedInputStream;
import org.xerial.snappy.SnappyInputStream;

/**
 * Reads values back the way Java applications do, with the libraries Cassandra ships
 * (snappy-java, lz4-java, zstd-jni) and the JDK: what cqlsh-ext's encode() wrote must read here.
 *
 * <p>Usage: {@code java -cp 'classes:<cassandra lib>/*' Readers <reader> <in> <out> [...]}: writes
 * what {@code <reader>} reads from the bytes in {@code <in>} to {@code <out>}; a String read from
 * a serialization stream is written as UTF-8. Called by tests/encode/java_readers.py.
 */
public final class Readers {
  private static byte[] drain(InputStream in) throws IOException {
    try (InputStream s = in) {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      s.transferTo(out);
      return out.toByteArray();
    }
  }

  private static byte[] read(String reader, byte[] data) throws Exception {
    ByteArrayInputStream in = new ByteArrayInputStream(data);
    switch (reader) {
      case "snappy_raw": return Snappy.uncompress(data);
      case "snappy_xerial": return drain(new SnappyInputStream(in));
      case "snappy_framed": return drain(new SnappyFramedInputStream(in));
      case "lz4_java_block": return drain(new LZ4BlockInputStream(in));
      case "lz4_frame": return drain(new LZ4FrameInputStream(in));
      case "zstd": return Zstd.decompress(data, (int) Zstd.decompressedSize(data));
      case "gzip": return drain(new GZIPInputStream(in));
      case "zlib": return drain(new InflaterInputStream(in));
      case "gzip_java_string":
        try (ObjectInputStream s = new ObjectInputStream(new GZIPInputStream(in))) {
          return ((String) s.readObject()).getBytes(StandardCharsets.UTF_8);
        }
      default: throw new IllegalArgumentException("no reader " + reader);
    }
  }

  public static void main(String[] args) throws Exception {
    for (int i = 0; i + 2 < args.length; i += 3) {
      byte[] data = Files.readAllBytes(Paths.get(args[i + 1]));
      Files.write(Paths.get(args[i + 2]), read(args[i], data));
    }
  }
}
