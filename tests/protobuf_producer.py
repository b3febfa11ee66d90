"""A Protocol Buffers descriptor set and message class for tests, built with protobuf's own
descriptor messages (the bytes `protoc --include_imports --descriptor_set_out` writes)."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def order_descriptor_set(directory: Path) -> tuple[Path, Any]:
    """A descriptor set as `protoc --include_imports --descriptor_set_out` writes it, for

        package acme;
        enum Status { UNKNOWN = 0; PAID = 1; }
        message Item { string sku = 1; int32 qty = 2; }
        message Order { int64 id = 1; string customer = 2; repeated Item items = 3;
                        Status status = 4; map<string, int32> counts = 5; }

    built with protobuf's own descriptor messages; returns (its path, the Order class)."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    F = descriptor_pb2.FieldDescriptorProto
    proto = descriptor_pb2.FileDescriptorProto(name="acme/order.proto", package="acme", syntax="proto3")
    proto.enum_type.add(name="Status").value.extend([
        descriptor_pb2.EnumValueDescriptorProto(name="UNKNOWN", number=0),
        descriptor_pb2.EnumValueDescriptorProto(name="PAID", number=1)])
    item = proto.message_type.add(name="Item")
    item.field.add(name="sku", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    item.field.add(name="qty", number=2, type=F.TYPE_INT32, label=F.LABEL_OPTIONAL)
    order = proto.message_type.add(name="Order")
    order.field.add(name="id", number=1, type=F.TYPE_INT64, label=F.LABEL_OPTIONAL)
    order.field.add(name="customer", number=2, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    order.field.add(name="items", number=3, type=F.TYPE_MESSAGE, type_name=".acme.Item",
                    label=F.LABEL_REPEATED)
    order.field.add(name="status", number=4, type=F.TYPE_ENUM, type_name=".acme.Status",
                    label=F.LABEL_OPTIONAL)
    entry = order.nested_type.add(name="CountsEntry")
    entry.options.map_entry = True
    entry.field.add(name="key", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    entry.field.add(name="value", number=2, type=F.TYPE_INT32, label=F.LABEL_OPTIONAL)
    order.field.add(name="counts", number=5, type=F.TYPE_MESSAGE, type_name=".acme.Order.CountsEntry",
                    label=F.LABEL_REPEATED)
    path = directory / "orders.desc"
    path.write_bytes(descriptor_pb2.FileDescriptorSet(file=[proto]).SerializeToString())
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return path, message_factory.GetMessageClass(pool.FindMessageTypeByName("acme.Order"))
