"""Protocol Buffers without a schema, as `protoc --decode_raw` shows them: field numbers and wire
types, with a length-delimited field shown as a nested message when its bytes parse as one, as
text when they are UTF-8 text, else as bytes.

Protobuf has no signature and almost any byte string parses as some message, so it is decoded only
when named (-d or a column setting), never detected.

With a descriptor set and a message type (`protobuf:acme.Order@orders.desc`, the set written by
`protoc --include_imports --descriptor_set_out=orders.desc`), fields are shown by name, enums by
their value's name, with the `protobuf` package's own parser; field numbers the type does not
know are listed rather than dropped, since they mean the type is not the writer's.
"""

from __future__ import annotations

import functools
import os
import struct
from typing import Any

from cqlsh_ext.payload import budget
from cqlsh_ext.payload.formats import PayloadFormat
from cqlsh_ext.payload.formats.tree import OverBudget, PayloadError, read_varint

#: Read without importing this module (common.declarations): its place in detection and
#: dispatch (lower first; auto-detection tries it only when FORMAT.auto), its place in name lists
#: and help, and what an argument after a colon names (payload.spec).
DECLARES = {
    "detection": 70,
    "listed": 70,
    "example": 2,
    "help": "schema-less, as protoc --decode_raw",
    "argument": "protobuf:package.Type@FILE.desc names the type and its descriptor set",
    "file_after": "@",
    "argument_help": "protobuf:package.Type@FILE.desc shows fields by name, from a descriptor set"
    " (protoc --include_imports --descriptor_set_out=FILE.desc).",
}


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    return read_varint(data, pos, "protobuf")


def _message(data: bytes, depth: int, meter: budget.Meter) -> dict[str, list[Any]]:
    if depth > meter.budget.depth:
        raise PayloadError(f"protobuf: {meter.budget.depth_reason}")
    fields: dict[str, list[Any]] = {}
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise PayloadError("protobuf: field number 0")
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire == 1:
            if pos + 8 > len(data):
                raise PayloadError("protobuf: truncated 64-bit field")
            value = struct.unpack_from("<Q", data, pos)[0]
            pos += 8
        elif wire == 5:
            if pos + 4 > len(data):
                raise PayloadError("protobuf: truncated 32-bit field")
            value = struct.unpack_from("<I", data, pos)[0]
            pos += 4
        elif wire == 2:
            size, pos = _varint(data, pos)
            if pos + size > len(data):  # the declared length is checked before anything is read
                raise PayloadError("protobuf: length beyond the value")
            value = _length_delimited(data[pos:pos + size], depth, meter)
            pos += size
        else:
            raise PayloadError(f"protobuf: wire type {wire} (groups are not read)")
        # Every field of every nested reading counts: BudgetExceeded is no PayloadError, so a
        # nested message over the budget stops the whole value instead of becoming bytes.
        meter.node()
        fields.setdefault(str(number), []).append(value)
    return fields


def _length_delimited(chunk: bytes, depth: int, meter: budget.Meter) -> Any:
    if chunk:
        try:
            return _message(chunk, depth + 1, meter)
        except PayloadError:
            pass
        try:
            text = chunk.decode("utf-8")
            if text.isprintable():
                return text
        except UnicodeDecodeError:
            pass
    return chunk


def decode(data: bytes) -> Any:
    try:
        fields = _message(data, 0, budget.current().meter())
    except budget.BudgetExceeded as err:
        raise OverBudget(f"protobuf: {err}") from None
    # One value per field shows as the value, repeated ones as a list: what decode_raw prints.
    return {k: v[0] if len(v) == 1 else v for k, v in fields.items()}


# ---------------------------------------------------------------- with a descriptor set


@functools.lru_cache(maxsize=32)
def _message_class(path: str, type_name: str) -> Any:
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    from google.protobuf.message import DecodeError

    try:
        with open(path, "rb") as file:
            files = descriptor_pb2.FileDescriptorSet.FromString(file.read(64 << 20))
    except (OSError, DecodeError) as err:
        raise PayloadError(f"protobuf: descriptor set {path}: {err}") from None
    pool = descriptor_pool.DescriptorPool()
    for proto in files.file:
        try:
            pool.Add(proto)
        except Exception as err:  # a set without --include_imports, conflicting files, ...
            raise PayloadError(f"protobuf: descriptor set {os.path.basename(path)}: {err}") from None
    try:
        descriptor = pool.FindMessageTypeByName(type_name)
    except KeyError:
        known = sorted(m for proto in files.file for m in _message_names(proto))
        hint = ", ".join(known[:5]) + (", ..." if len(known) > 5 else "")
        raise PayloadError(f"protobuf: no message type {type_name!r} in {os.path.basename(path)}"
                           f"{' (it has ' + hint + ')' if hint else ''}") from None
    return message_factory.GetMessageClass(descriptor)


def _message_names(proto: Any) -> list[str]:
    prefix = f"{proto.package}." if proto.package else ""
    out: list[str] = []

    def walk(messages: Any, scope: str) -> None:
        for message in messages:
            out.append(scope + message.name)
            walk(message.nested_type, f"{scope}{message.name}.")

    walk(proto.message_type, prefix)
    return out


def decode_with_descriptors(data: bytes, argument: str) -> Any:
    """`argument`: 'package.Type@descriptor-set-path'."""
    from google.protobuf.message import DecodeError

    type_name, _, path = argument.partition("@")
    cls = _message_class(path, type_name)
    message = cls()
    try:
        message.ParseFromString(data)
    except (DecodeError, RecursionError) as err:
        raise PayloadError(f"protobuf: not a {type_name} message ({err})") from None
    return _tree(message, 0)


def _tree(message: Any, depth: int) -> Any:
    limits = budget.current()
    if depth > limits.depth:
        raise PayloadError(f"protobuf: {limits.depth_reason}")
    from google.protobuf import unknown_fields

    out: dict[str, Any] = {}
    for field, value in message.ListFields():
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            value_field = field.message_type.fields_by_name["value"]
            out[field.name] = {k: _value(value_field, v, depth) for k, v in value.items()}
        elif _repeated(field):
            out[field.name] = [_value(field, v, depth) for v in value]
        else:
            out[field.name] = _value(field, value, depth)
    unknown = sorted({item.field_number for item in unknown_fields.UnknownFieldSet(message)})
    if unknown:
        out["$unknown fields"] = unknown
    return out


def _repeated(field: Any) -> bool:
    """Whether a field is repeated: protobuf 7 says is_repeated (and took the field's label away),
    protobuf 5 says it by the label; pyproject.toml's range takes both (tests/test_environment.py)."""
    repeated = getattr(field, "is_repeated", None)
    if repeated is None:
        from google.protobuf.descriptor import FieldDescriptor

        return bool(field.label == FieldDescriptor.LABEL_REPEATED)
    return bool(repeated)


def _value(field: Any, value: Any, depth: int) -> Any:
    from google.protobuf.descriptor import FieldDescriptor

    if field.type in (FieldDescriptor.TYPE_MESSAGE, FieldDescriptor.TYPE_GROUP):
        return _tree(value, depth + 1)
    if field.type == FieldDescriptor.TYPE_ENUM:
        named = field.enum_type.values_by_number.get(value)
        return named.name if named is not None else value
    return value


def encode_with_descriptors(record: Any, argument: str) -> bytes:
    """The message the JSON describes (json_format.ParseDict), serialized deterministically."""
    from google.protobuf import json_format

    type_name, _, path = argument.partition("@")
    message = _message_class(path, type_name)()
    try:
        json_format.ParseDict(record, message)
    except (json_format.ParseError, TypeError, ValueError) as err:
        raise PayloadError(f"protobuf: not a {type_name} ({str(err).splitlines()[0][:120]})") from None
    return bytes(message.SerializeToString(deterministic=True))


FORMAT = PayloadFormat("protobuf", False, lambda data: True, decode, decode_with=decode_with_descriptors,
                       encode_with=encode_with_descriptors,
                       writer="protobuf SerializeToString(deterministic)",
                       unwritable="written with its descriptor only: protobuf:Type@FILE.desc",
                       confidence="guessed",
                       confidence_why="almost any bytes parse as some message")
