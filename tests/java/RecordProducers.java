import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.cbor.CBORFactory;
import com.fasterxml.jackson.dataformat.cbor.CBORGenerator;
import com.fasterxml.jackson.dataformat.smile.SmileFactory;
import com.fasterxml.jackson.dataformat.smile.SmileGenerator;
import com.google.protobuf.DescriptorProtos.DescriptorProto;
import com.google.protobuf.DescriptorProtos.EnumDescriptorProto;
import com.google.protobuf.DescriptorProtos.EnumValueDescriptorProto;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.FileDescriptorSet;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.DynamicMessage;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.file.CodecFactory;
import org.apache.avro.file.DataFileWriter;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.message.BinaryMessageEncoder;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
import org.msgpack.jackson.dataformat.MessagePackFactory;

/**
 * Writes one record with the Java libraries services use for record formats, all defaults unless
 * noted: {@code java -cp 'classes:<jars>/*' RecordProducers <out-dir>} writes {@code <name>.bin}.
 * The record is RECORD below; tests/payload/test_java_records.py states what each file must read
 * as. Jars: tests/java/record-formats-pom.xml. Called by tests/java_producers.py.
 */
public final class RecordProducers {
  static Map<String, Object> record() {
    Map<String, Object> record = new LinkedHashMap<>();
    record.put("id", 42);
    record.put("big", 9007199254740993L); // 2^53 + 1: not exact as a double
    record.put("customer", "Ada Lovelace ö €");
    record.put("price", 19.99);
    record.put("paid", true);
    record.put("note", null);
    List<Object> items = new ArrayList<>();
    items.add(new LinkedHashMap<>(Map.of("sku", "SKU-1")));
    items.add(new LinkedHashMap<>(Map.of("sku", "SKU-2")));
    record.put("items", items);
    record.put("tags", Arrays.asList("alpha", "beta", "alpha", "beta")); // repeated values
    Map<String, Object> many = new LinkedHashMap<>();
    for (int i = 0; i < 100; i++) {
      many.put("key" + i, i); // more key names than Smile's short back-references reach
    }
    record.put("many", many);
    record.put("again", new LinkedHashMap<>(many)); // the same names again: back-references
    return record;
  }

  public static void main(String[] args) throws Exception {
    Path dir = Files.createDirectories(Paths.get(args[0]));
    Map<String, Object> record = record();

    Files.write(dir.resolve("msgpack_jackson.bin"),
        new ObjectMapper(new MessagePackFactory()).writeValueAsBytes(record));
    Files.write(dir.resolve("cbor_jackson.bin"), new ObjectMapper(new CBORFactory()).writeValueAsBytes(record));
    CBORFactory tagged = CBORFactory.builder().enable(CBORGenerator.Feature.WRITE_TYPE_HEADER).build();
    Files.write(dir.resolve("cbor_jackson_tagged.bin"), new ObjectMapper(tagged).writeValueAsBytes(record));
    Files.write(dir.resolve("smile_jackson.bin"), new ObjectMapper(new SmileFactory()).writeValueAsBytes(record));
    SmileFactory shared = SmileFactory.builder()
        .enable(SmileGenerator.Feature.CHECK_SHARED_STRING_VALUES).build();
    Map<String, Object> withBytes = new LinkedHashMap<>(record);
    withBytes.put("raw", new byte[] {0, 1, 2, (byte) 0xff, 127, (byte) 0x80});
    Files.write(dir.resolve("smile_jackson_shared_values.bin"), new ObjectMapper(shared).writeValueAsBytes(withBytes));

    // msgpack-java's packer as services use it directly: integer keys, a timestamp extension.
    MessageBufferPacker packer = MessagePack.newDefaultBufferPacker();
    packer.packMapHeader(3);
    packer.packInt(1).packString("one");
    packer.packInt(2).packArrayHeader(2).packLong(-1L).packDouble(0.5);
    packer.packString("at").packTimestamp(Instant.ofEpochSecond(1700000000L, 123000000));
    packer.close();
    Files.write(dir.resolve("msgpack_java_packer.bin"), packer.toByteArray());

    Schema schema = new Schema.Parser().parse(
        "{\"type\":\"record\",\"name\":\"Order\",\"namespace\":\"acme\",\"fields\":["
            + "{\"name\":\"id\",\"type\":\"long\"},{\"name\":\"customer\",\"type\":\"string\"},"
            + "{\"name\":\"tags\",\"type\":{\"type\":\"array\",\"items\":\"string\"}}]}");
    Files.write(dir.resolve("order.avsc"), schema.toString(true).getBytes(StandardCharsets.UTF_8));
    GenericRecord order = new GenericData.Record(schema);
    order.put("id", 7L);
    order.put("customer", "Ada");
    order.put("tags", Arrays.asList("x", "y"));
    for (String codec : List.of("null", "deflate")) {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      try (DataFileWriter<GenericRecord> writer = new DataFileWriter<>(new GenericDatumWriter<>(schema))) {
        writer.setCodec(CodecFactory.fromString(codec));
        writer.create(schema, out);
        writer.append(order);
        writer.append(order);
      }
      Files.write(dir.resolve("avro_file_" + codec + ".bin"), out.toByteArray());
    }
    Files.write(dir.resolve("avro_single_object.bin"),
        new BinaryMessageEncoder<GenericRecord>(GenericData.get(), schema).encode(order).array());

    // protobuf-java with a descriptor built at run time (what protoc would generate code for):
    //   package acme; enum Status { UNKNOWN = 0; PAID = 1; }
    //   message Item { string sku = 1; int32 qty = 2; }
    //   message Order { int64 id = 1; string customer = 2; repeated Item items = 3; Status status = 4; }
    FieldDescriptorProto.Label optional = FieldDescriptorProto.Label.LABEL_OPTIONAL;
    FileDescriptorProto file = FileDescriptorProto.newBuilder()
        .setName("acme/order.proto").setPackage("acme").setSyntax("proto3")
        .addEnumType(EnumDescriptorProto.newBuilder().setName("Status")
            .addValue(EnumValueDescriptorProto.newBuilder().setName("UNKNOWN").setNumber(0))
            .addValue(EnumValueDescriptorProto.newBuilder().setName("PAID").setNumber(1)))
        .addMessageType(DescriptorProto.newBuilder().setName("Item")
            .addField(field("sku", 1, FieldDescriptorProto.Type.TYPE_STRING, optional, null))
            .addField(field("qty", 2, FieldDescriptorProto.Type.TYPE_INT32, optional, null)))
        .addMessageType(DescriptorProto.newBuilder().setName("Order")
            .addField(field("id", 1, FieldDescriptorProto.Type.TYPE_INT64, optional, null))
            .addField(field("customer", 2, FieldDescriptorProto.Type.TYPE_STRING, optional, null))
            .addField(field("items", 3, FieldDescriptorProto.Type.TYPE_MESSAGE,
                FieldDescriptorProto.Label.LABEL_REPEATED, ".acme.Item"))
            .addField(field("status", 4, FieldDescriptorProto.Type.TYPE_ENUM, optional, ".acme.Status")))
        .build();
    Files.write(dir.resolve("orders.desc"), FileDescriptorSet.newBuilder().addFile(file).build().toByteArray());
    FileDescriptor fd = FileDescriptor.buildFrom(file, new FileDescriptor[0]);
    Descriptor orderType = fd.findMessageTypeByName("Order");
    Descriptor itemType = fd.findMessageTypeByName("Item");
    DynamicMessage item = DynamicMessage.newBuilder(itemType)
        .setField(itemType.findFieldByName("sku"), "SKU-1")
        .setField(itemType.findFieldByName("qty"), 2).build();
    DynamicMessage message = DynamicMessage.newBuilder(orderType)
        .setField(orderType.findFieldByName("id"), 1099511627776L)
        .setField(orderType.findFieldByName("customer"), "Ada")
        .addRepeatedField(orderType.findFieldByName("items"), item)
        .setField(orderType.findFieldByName("status"), fd.findEnumTypeByName("Status").findValueByName("PAID"))
        .build();
    Files.write(dir.resolve("protobuf_java.bin"), message.toByteArray());
  }

  private static FieldDescriptorProto.Builder field(
      String name, int number, FieldDescriptorProto.Type type, FieldDescriptorProto.Label label, String typeName) {
    FieldDescriptorProto.Builder b =
        FieldDescriptorProto.newBuilder().setName(name).setNumber(number).setType(type).setLabel(label);
    return typeName == null ? b : b.setTypeName(typeName);
  }
}
