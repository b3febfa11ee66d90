// An order as a Cassandra-era service kept it in a blob: what tests/payload/test_thrift.py writes
// with thriftpy2 and Apache Thrift, and reads back by field id and, with this file, by name.
namespace py shop

enum Status { NEW = 1, PAID = 2, SHIPPED = 3 }

struct Item {
  1: string sku,
  2: i32 qty,
  3: double price,
}

struct Order {
  1: i64 id,
  2: string customer,
  3: list<Item> items,
  4: bool paid,
  5: Status status,
  6: map<string, i32> counts,
  7: set<string> tags,
  8: binary raw,
  9: optional i16 small,
  10: byte flag,
}

struct Shipment {
  1: string carrier,
  2: Order order,
}
