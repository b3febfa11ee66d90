"""One stored value edited and written back in its own chain, or refused with the reason.

The value is read by the one engine (payload.engine) as the display reads it; its layers (each a
container whose module writes it: codecs.capabilities.Writer) and its payload (JSON text, or a
record format that writes from its tree) are the chain encode() writes the new document in
(encode.chain: the same writers, the same verify-by-decoding). Before anything is edited, the
untouched document must write back to the stored payload byte for byte (so only what the statement
names changes), and after it, the new value must read back, by the engine in auto mode, as the same
chain with the intended document.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cqlsh_ext.edit.document import EditRefused, Op, apply, json_spacing, read_json, write_json
from cqlsh_ext.writing.beside import beside

if TYPE_CHECKING:
    from cqlsh_ext.encode.chain import Encoded
    from cqlsh_ext.payload.engine import ValueEngine
    from cqlsh_ext.payload.view import BlobView


@dataclass(frozen=True)
class EditedValue:
    """The new stored bytes, the chain they were written in and the changes: (path, old, new)."""

    value: bytes
    chain: str
    changes: list[tuple[str, Any, Any]]
    #: How the outer container's header differs from the stored one's, field by field.
    notes: list[str]


def rewrite(stored: bytes, engine: ValueEngine, ops: Sequence[Op], cap: int,
            view: BlobView | None = None) -> EditedValue | None:
    """`stored` with `ops` applied, in its own chain (`view`: the reading's view of it, else the
    engine's); None when nothing changes; EditRefused."""
    from cqlsh_ext.payload.view import RECORD, TEXT

    if view is None:
        view = engine.view(stored)
    cut = view.truncated_layer
    if cut is not None:
        raise EditRefused(f"the value is cut at the output cap ({cut.label}): raise --max-output-size to "
                          "edit it")
    labels = _layers(view, stored)
    kept = beside(view, stored, cap)
    if kept.refused:
        raise EditRefused(kept.refused)
    if view.kind in (TEXT, RECORD):  # a document read from an unverified reading is never written back
        unverified = unverified_reading(view, stored[len(kept.before):len(stored) - len(kept.after)],
                                        view.data, cap)
        if unverified is not None:
            raise EditRefused(unverified)
    if view.kind == TEXT:
        edited = _rewrite_text(view, stored, labels, ops, cap)
    elif view.kind == RECORD and view.stream_format is None:
        edited = _rewrite_record(view, engine, labels, ops, cap)
    else:
        raise EditRefused(_unreadable(view))
    if edited is None:
        return None
    encoded, changes = edited
    value = kept.before + encoded.value + kept.after
    _same_form(view, engine, value, cap)
    notes = _header_notes(view, stored, encoded.value)
    if kept.what:
        notes.append(f"{kept.what}: kept as they were")
    return EditedValue(value, encoded.chain, changes, notes)


def _rewrite_text(view: BlobView, stored: bytes, labels: list[str], ops: Sequence[Op],
                  cap: int) -> tuple[Encoded, list[tuple[str, Any, Any]]] | None:
    """A JSON text's document with `ops` applied, written in its chain with its own spacing, and
    the changes; None when nothing changes; EditRefused."""
    from cqlsh_ext.encode.chain import EncodeRefused, encode, same
    from cqlsh_ext.payload.view import spell

    text = view.text or ""
    if view.tree is None:
        raise EditRefused(_no_tree(view, text, cap))
    _within_depth(view.tree, view, cap)
    # The bytes under the last layer peeled (a column setting's walk leaves payload_size alone).
    size = next((layer.output_size for layer in reversed(view.layers) if not layer.reading), len(stored))
    if len(text.encode("utf-8")) != size:
        raise EditRefused("its text is not stored as UTF-8")
    tree = read_json(text)
    spacing = json_spacing(text, tree)
    changes = apply(tree, ops)
    if not changes:
        return None
    new_text = write_json(tree, spacing)
    if not same(read_json(new_text), tree):
        raise EditRefused("the new JSON text does not read back as the edited document")
    chain = spell([*labels, "text"])
    try:
        return encode(chain, new_text, cap), changes
    except EncodeRefused as err:
        raise EditRefused(f"not written back as {chain}: {err}") from None


def _rewrite_record(view: BlobView, engine: ValueEngine, labels: list[str], ops: Sequence[Op],
                    cap: int) -> tuple[Encoded, list[tuple[str, Any, Any]]] | None:
    """A record format's document with `ops` applied, written by its format's writer (which must
    first write the untouched record back byte for byte), and the changes; None when nothing
    changes; EditRefused."""
    from cqlsh_ext.encode.chain import Encoder, EncodeRefused, record_writer
    from cqlsh_ext.payload import formats
    from cqlsh_ext.payload.view import spell

    fmt = formats.get(str(view.payload_format))
    argument = _argument(engine, str(view.payload_format))  # a schema's format: its schema the setting's
    write = record_writer(fmt, argument) if fmt is not None and not fmt.encodes_text else None
    if fmt is None or write is None:
        why = fmt.unwritable if fmt is not None else "no writer for it here"
        raise EditRefused(f"{view.payload_format}: {why}")
    try:
        again = write(view.record)
    except (formats.PayloadError, TypeError, ValueError, OverflowError):
        again = None
    if again != view.data:
        raise EditRefused(f"its {view.payload_format} is written in a way this shell's writer does not "
                          "repeat (its untouched document would change)")
    tree = copy.deepcopy(view.record)
    changes = apply(tree, ops)
    if not changes:
        return None
    reading = str(view.payload_format) if argument is None else f"{view.payload_format}:{argument}"
    chain = spell([*labels, reading])
    try:
        return Encoder(chain, cap).record(tree), changes
    except EncodeRefused as err:
        raise EditRefused(f"not written back as {chain}: {err}") from None


def _no_tree(view: BlobView, text: str, cap: int) -> str:
    """Why a text has no JSON tree to edit, naming the budget when it is what stopped it."""
    from cqlsh_ext.payload.budget import Budget

    head = text.lstrip()[:1]
    if head not in ("{", "["):
        return "its text is not a JSON object or list"
    budget = view.budget or Budget.for_cap(cap)
    if len(text) > budget.nodes and text.count(",") + text.count("[") + text.count("{") > budget.nodes:
        return (f"its JSON holds more than {budget.nodes:,} values, over the value budget "
                f"({budget.nodes:,} nodes at --max-output-size {_size(cap)}): not edited here")
    return "its text is not valid JSON"


def _within_depth(tree: Any, view: BlobView, cap: int) -> None:
    """EditRefused when the document nests deeper than the value budget's depth (counted without
    recursion: a hostile document is deep)."""
    from cqlsh_ext.payload.budget import Budget

    limit = (view.budget or Budget.for_cap(cap)).depth
    stack: list[tuple[Any, int]] = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            raise EditRefused(f"its JSON nests deeper than {limit} levels, the value budget's depth: not "
                              "edited here")
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))


def _size(n: int) -> str:
    from cqlsh_ext.common.units import human_size

    return str(human_size(n))


def _argument(engine: ValueEngine, payload_format: str) -> str | None:
    """The column setting's argument of the payload format (a schema file), when the engine reads
    by a setting that names that format with one."""
    from cqlsh_ext.payload.spec import parse_spec

    if engine.spec is None:
        return None
    spec = parse_spec(engine.spec)
    return spec.argument if spec.payload == payload_format else None


def unverified_reading(view: BlobView, frames: bytes, payload: bytes, cap: int) -> str | None:
    """Why the reading of a value's compression layers cannot be vouched for, None when it can
    (docs/rewrite.md, "Only what is verified is written"): `frames`, the stored bytes of its
    containers (without bytes beside them), read by `view` into `payload`, the bytes under them.

    Verified: the containers' reading is confident (payload.confidence: a checksum over the
    output, or a signature and a whole structure that the value's bytes alone decide, or a chain
    the user named in a DECODE setting), or else the payload written again in the value's own
    chain (the outer container at the level its header shows, with the dictionary it names) is
    `frames` byte for byte: this shell's writer makes exactly the stored value of that payload, so
    it is the payload the value holds. Not verified: a frame read with a dictionary and no checksum
    (a wrong dictionary of the right size reads it into garbage just as well), a container without
    a signature, whose round trip does not give the stored bytes back."""
    from cqlsh_ext.encode.chain import EncodeRefused, encode
    from cqlsh_ext.payload.confidence import CONFIDENT, containers_explained
    from cqlsh_ext.payload.view import spell

    found = containers_explained(view)
    if found is None or found[0] == CONFIDENT:
        return None
    head = f"its reading is not verified ({found[1]})"
    try:
        again = encode(spell(_layers(view, frames, containers=True)), payload, cap).value
    except (EditRefused, EncodeRefused) as err:
        return f"{head}, and its chain is not written here to check it ({err})"
    if again != frames:
        return f"{head}, and its payload written again in its own chain is not the stored value"
    return None


def _layers(view: BlobView, stored: bytes, containers: bool = False) -> list[str]:
    """The chain's steps, one per layer, each a container this shell writes (the outer one at the
    level its header shows, if it shows one, and with the store's dictionary it names, if it names
    one: the inner layers' bytes are not kept); EditRefused. `containers`: the compression
    containers alone, up to a serialization stream."""
    from cqlsh_ext.codecs.capabilities import Writer, unwritable, writes_dictionaries

    steps: list[str] = []
    for layer in view.layers:
        if layer.reading:
            continue
        if layer.fmt is None and containers:
            break
        if layer.fmt is None:
            raise EditRefused(f"{layer.label}: a serialization stream is read here, never written")
        if not isinstance(layer.fmt, Writer):
            raise EditRefused(f"{layer.fmt.label}: {unwritable(layer.fmt)}")
        outer = not steps
        level = layer.fmt.level_shown(stored) if outer else None
        named = None
        if outer and writes_dictionaries(layer.fmt):
            named = layer.fmt.dictionary_named(stored)
        settings = [*([] if level is None else [str(level)]), *([] if named is None else [f"dict={named}"])]
        steps.append(f"{layer.label}:{','.join(settings)}" if settings else layer.label)
    return steps


def _unreadable(view: BlobView) -> str:
    from cqlsh_ext.payload.view import BINARY, FAILED, RECORD

    if view.kind == FAILED:
        return f"it does not decode ({view.reason})"
    if view.kind == BINARY:
        what = f"a {view.object_class} object" if view.object_class else "a binary payload"
        return f"{view.label or 'it'} holds {what}: no document to edit"
    if view.kind == RECORD:
        return f"{view.stream_format}: a serialization stream is read here, never written"
    return "no known format: nothing to edit (a DECODE setting names its chain)"


def _same_form(before: BlobView, engine: ValueEngine, value: bytes, cap: int) -> None:
    """The new bytes read by the engine as the old ones were: same chain, same reading. (A place
    whose chain a sibling column picks reads them by the chain the old value was read by: the
    row's sibling is unchanged.)"""
    if engine.choice is not None:
        from cqlsh_ext.payload.unwrap import unwrap_spec

        after = unwrap_spec(value, before.label, cap)
    else:
        after = engine.view(value)
    if after.label != before.label or after.cut:
        raise EditRefused(f"the new value reads as {after.label or after.kind}, not {before.label}")


def _header_notes(view: BlobView, stored: bytes, value: bytes) -> list[str]:
    """The outer container's header fields that differ between the stored bytes and the new ones:
    its flags and named settings (a frame's checksum flag, whether it declares its size, a block
    size), not what follows from the content (sizes, checksums, offsets)."""
    from cqlsh_ext.codecs.capabilities import Headers

    outer = next((layer.fmt for layer in view.layers if layer.fmt is not None), None)
    if outer is None or not isinstance(outer, Headers):
        return []
    try:
        before, after = _settings(outer.headers(stored)), _settings(outer.headers(value))
    except Exception:  # a header the INSPECT reader cannot walk: nothing to compare
        return []
    fields = [f"{name}: {_shown(before.get(name))} -> {_shown(after.get(name))}"
              for name in sorted(before.keys() | after.keys()) if before.get(name) != after.get(name)]
    return [f"{outer.label} {', '.join(fields)}"] if fields else []


def _settings(fields: dict[str, object]) -> dict[str, object]:
    """Header fields that say how the container was written: flags (booleans), named settings
    (text that is no hex number) and whether an optional field is there; the first frame's, chunk's
    or block's too."""
    out: dict[str, object] = {}
    for name, value in fields.items():
        if name == "format":
            continue
        if isinstance(value, list) and value and isinstance(value[0], dict):
            out.update(_settings(value[0]))
        elif isinstance(value, bool) or (isinstance(value, str) and not value.startswith("0x")):
            out[name] = value
        elif value is None:
            out[name] = "absent"
        elif isinstance(value, int) and name.endswith(("_size", "size_field_bytes")) and "content" in name:
            out[name] = "present"
        elif isinstance(value, int) and name in ("block_max_size", "block_size"):
            out[name] = value
    return out


def _shown(value: object) -> str:
    return "none" if value is None else str(value)
