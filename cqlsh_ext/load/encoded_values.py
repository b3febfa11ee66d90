"""A load's values (docs/load.md): each source row's key and the values of the columns it writes,
a blob's encoded by the one rule and verified, or the row refused with the reason.

The rule: a blob value is written in the chain, the first of

1. the column's ENCODE (`WITH ENCODE data = 'snappy>json'`, db.write's encode={"data": ...});
2. the value's own label, where the source carries the exports' blob object (JSON Lines'
   {"label": "zstd>msgpack", "kind": "record", "payload": ...}, Parquet's `data:label`);
3. the column's DECODE setting, where it names a chain;

and a document none of these names is refused. Bytes the source gives without a label (a value in
no known format, `0x...`) are written as they are, and compressed by the codecs of an ENCODE as
encode('chain', 0x...) compresses them. Every value written is encoded by encode()'s writers and
decoded back by the display's own path before anything is sent (encode.chain.Encoder): one that
does not come back equal refuses its row, and nothing of that row is written.

Once a row's cells are read (Columns.settle), what a source's document cannot say is read from the
stored document (load.documents: a frame's null for a key absent, a float place's 2.0 for 2, JSON
Lines' name of a record's NaN), and a value that holds the stored document in the stored chain
is the stored bytes: not written.
"""

from __future__ import annotations

import datetime
import decimal
import functools
import json
import math
import re
import struct
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

# (imported here, not in the functions a value calls: this module is imported by a load alone, and
# an import statement run for each of a load's values cost more than the step it imported for)
from cqlsh_ext.common import jsonenc
from cqlsh_ext.encode.chain import AS_IS, EncodeRefused, json_record
from cqlsh_ext.load.documents import SPELT, fresh, holds_float_names, settled, spelt_tree, without
from cqlsh_ext.load.source import ABSENT, CsvField, Fragment, GivenValue, NumberText, SourceRow
from cqlsh_ext.payload.names import ARGUMENT_NAMES, BUILTIN_READINGS, STREAM_MAGICS
from cqlsh_ext.payload.view import RECORD, TEXT, BlobView

if TYPE_CHECKING:
    from cqlsh_ext.encode.chain import Encoder
    from cqlsh_ext.payload.columns import BlobReading
    from cqlsh_ext.payload.places import Decoding, ValuePlace

#: Columns a load writes beside the key: blobs and text (UNDO writes a cell back as its bytes).
WRITTEN_TYPES = frozenset({"blob", "text", "varchar", "ascii"})
TEXT_TYPES = frozenset({"text", "varchar", "ascii"})
#: Key columns' types a source's values are read into.
KEY_TYPES = frozenset({"text", "varchar", "ascii", "int", "bigint", "smallint", "tinyint", "varint", "float",
                       "double", "decimal", "boolean", "uuid", "timeuuid", "timestamp", "date", "time",
                       "inet", "blob"})
#: What the closing figures call a value written as the source gave its bytes.
AS_GIVEN = "bytes as given"
#: What a source cannot say of a document no stored one settles (a row new to the table, no stored
#: bytes beside it), as the preview counts it (docs/load.md: export WITH RAW = true for an exact copy).
UNSAID_NULLS = "null fields, written as keys absent (a frame cannot tell a null from a key absent)"
UNSAID_NAMES = ("NaN or Infinity spelt as strings in a record, written as strings (JSON Lines spells "
                "a record's NaN and infinities so)")


class RowRefused(ValueError):
    """A row not written: str() names the column and why; `group`, the reason the figures count
    it under where the row's own words name its value (a key of the wrong sort: one line a
    column and sort, not one a row)."""

    def __init__(self, reason: str, group: str | None = None) -> None:
        super().__init__(reason)
        self.group = group


@dataclass
class ColumnPlan:
    """One column of the request: its name, its CQL type's text, its place in the source's row,
    whether it is of the key, a blob or text; a blob's ENCODE and column setting."""

    name: str
    cql_type: str
    position: int
    key: bool
    blob: bool
    encode: str | None = None
    setting: str | None = None
    #: A blob column's place (its column settings: how its stored values read).
    place: ValuePlace | None = None


@dataclass(frozen=True)
class Pending:
    """A blob's document that the stored one settles (load.documents): encoded in `encoder`'s
    chain once the row's cells are read (Columns.settle)."""

    given: GivenValue
    encoder: Encoder


@dataclass
class PreparedRow:
    """A source row ready to be written: its key (the driver's values and serialized), each
    written column's value (bytes for a blob, text, or None), the chain each blob was written in
    (AS_GIVEN for bytes as the source gave them, "" for null)."""

    row: SourceRow
    key: list[Any]
    serialized: tuple[bytes, ...]
    values: list[Any]
    chains: list[str] = field(default_factory=list)
    #: The written columns' values as stored bytes (None: null), once they are reckoned.
    cells: list[bytes | None] = field(default_factory=list)
    #: What the source could not say of a document no stored one settles (UNSAID_NULLS, UNSAID_NAMES).
    unsaid: list[str] = field(default_factory=list)


class Columns:
    """The request's columns against the table (see the module doc): the key's, in the primary
    key's order, then those written, in the request's."""

    def __init__(self, keyspace: str, meta: Any, names: Sequence[str], encode: Sequence[tuple[str, str]],
                 decoding: Decoding, cap: int, python: bool = False) -> None:
        from cqlsh_ext.cql.errors import QueryError
        from cqlsh_ext.payload.places import ValuePlace

        self.cap = cap
        #: The door is Python's (db.write): a hint names its keyword, not the shell's ENCODE.
        self.python = python
        self.keyspace, self.meta = keyspace, meta
        keys = [c.name for c in (*meta.partition_key, *meta.clustering_key)]
        seen: set[str] = set()
        plans: dict[str, ColumnPlan] = {}
        for i, name in enumerate(names):
            if name not in meta.columns:
                raise QueryError(f"{keyspace}.{meta.name} has no column {name}")
            if name in seen:
                raise QueryError(f"{name} is named twice")
            seen.add(name)
            column = meta.columns[name]
            text = str(column.cql_type)
            key = name in keys
            if getattr(column, "is_static", False):
                raise QueryError(f"{name} is a static column: a load writes a row's own columns")
            if key and text not in KEY_TYPES:
                raise QueryError(f"{name} is a {text}: a load reads keys of CQL's plain types")
            if not key and text not in WRITTEN_TYPES:
                raise QueryError(f"{name} is a {text}: a load writes blob and text columns beside the key "
                                 "(leave it out of the columns, or load it with cqlsh's COPY FROM)")
            blob = text == "blob" and not key
            place = ValuePlace(keyspace, meta.name, name, ()) if blob else None
            setting = decoding.spec(place) if place is not None else None
            plans[name] = ColumnPlan(name, text, i, key, blob, None, setting, place)
        missing = [k for k in keys if k not in plans]
        if missing:
            raise QueryError(f"the columns name no {missing[0]}: a load writes whole rows, named by their "
                             "primary key")
        for name, chain in encode:
            plan = plans.get(name)
            if plan is None:
                raise QueryError(f"ENCODE {name}: not a column the load writes")
            if not plan.blob:
                raise QueryError(f"ENCODE {name}: {name} is a {plan.cql_type}, not a blob")
            plan.encode = chain
        self.keys = [plans[k] for k in keys]
        self.written = [p for p in plans.values() if not p.key]
        if not self.written:
            raise QueryError("the columns are the primary key's alone: a load writes columns beside it")
        self.partition_key = [c.name for c in meta.partition_key]
        self.clustering = [c.name for c in meta.clustering_key]
        self._encoders: dict[str, Encoder | str] = {}
        self._decoding = decoding
        self._reading: BlobReading | None = None
        for plan in self.written:
            if plan.encode is not None:
                found = self._encoder(plan.encode)
                if isinstance(found, str):
                    raise QueryError(f"ENCODE {plan.name} = '{plan.encode}': {found}")

    @property
    def blobs(self) -> frozenset[str]:
        return frozenset(p.name for p in self.written if p.blob)

    def _encoder(self, chain: str) -> Encoder | str:
        """The chain's encoder, made once (a chain refused: its reason)."""
        found = self._encoders.get(chain)
        if found is None:
            from cqlsh_ext.encode.chain import Encoder

            try:
                found = Encoder(chain, self.cap)
            except EncodeRefused as err:
                found = str(err)
            self._encoders[chain] = found
        return found

    # ------------------------------------------------------------------ a row
    def key_of(self, row: SourceRow) -> list[Any]:
        """The row's primary key as the driver takes it; RowRefused naming the column."""
        if row.stray is not None:
            raise RowRefused(stray_text(row.stray, self.meta, self.keyspace))
        out = []
        for plan in self.keys:
            value = row.values[plan.position]
            if value is None:
                raise RowRefused(f"{plan.name}: null, and a primary key column holds a value")
            try:
                out.append(cql_value(value, plan.cql_type))
            except (TypeError, ValueError, ArithmeticError) as err:
                raise RowRefused(f"{plan.name}: {_brief(value)} is no {plan.cql_type} ({err})",
                                 f"{plan.name}: no {plan.cql_type} ({err})") from None
        return out

    def values_of(self, row: SourceRow) -> tuple[list[Any], list[str]]:
        """The written columns' values and, per column, the chain written; RowRefused naming the
        column and why (nothing of the row is written)."""
        values: list[Any] = []
        chains: list[str] = []
        for plan in self.written:
            value = row.values[plan.position]
            if plan.blob:
                stored, chain = self.blob_value(plan, value)
                values.append(stored)
                chains.append(chain)
            elif value is None:
                values.append(None)
                chains.append("")
            elif isinstance(value, str) and not isinstance(value, NumberText):  # (a JSON number: no text)
                values.append(value)
                chains.append("")
            else:
                raise RowRefused(f"{plan.name}: {_brief(value)} is not text")
        return values, chains

    def blob_value(self, plan: ColumnPlan, given: GivenValue | None) -> tuple[bytes | Pending | None, str]:
        """A blob's stored bytes by the rule (see the module doc), and the chain written; a
        document the stored one settles (a frame's, an export's record: load.documents) Pending."""
        name = plan.name
        if given is None:
            return None, ""
        if given.refused is not None:
            raise RowRefused(f"{name}: {given.refused}")
        if given.cut is not None:
            raise RowRefused(f"{name}: the source holds it cut ({given.cut}): not its whole value")
        label = label_chain(given.label, plan.setting) if given.label else None
        if given.data is not None:
            if given.stored:  # a value read, its payload not in the source: its stored bytes
                if plan.encode is not None and plan.encode != label:
                    raise RowRefused(f"{name}: the source holds its stored bytes ({given.label}), not its "
                                  f"payload: ENCODE {plan.encode} cannot write it again (load it without "
                                  "ENCODE, as it is)")
                return given.data, AS_GIVEN
            chain = plan.encode if plan.encode is not None else label
            if not chain:
                return given.data, AS_GIVEN
            encoder = self._encoder(chain)
            if isinstance(encoder, str):
                raise RowRefused(f"{name}: {chain}: {encoder}")
            try:
                return encoder.text(given.data).value, encoder.chain
            except EncodeRefused as err:
                raise RowRefused(f"{name}: {chain}: {err}") from None
        chain = plan.encode or label or _fixed(plan.setting)
        if not chain:
            hint = f"encode={{{name!r}: '<chain>'}}" if self.python else f"ENCODE {name} = '<chain>'"
            if given.label_alone:
                raise RowRefused(f"{name}: no chain to write it in: the source has {name}:label but no "
                                 f"{name}:kind, which says how the label reads (the exports write both); "
                                 f"or {hint} names one")
            raise RowRefused(f"{name}: no chain to write it in (a document, not an export's object "
                             f"naming its label): {hint} names one")
        encoder = self._encoder(chain)
        if isinstance(encoder, str):
            raise RowRefused(f"{name}: {chain}: {encoder}")
        if given.tree is not None or _records(encoder):  # (a record's JSON: as the exports spell it)
            return Pending(given, encoder), encoder.chain
        if not given.checked and encoder.spec.payload == "json":
            _refuse_twice(name, given.text or "")
        try:
            return encoder.text(given.text or "").value, encoder.chain
        except EncodeRefused as err:
            raise RowRefused(f"{name}: {chain}: {err}") from None

    # ------------------------------------------------------------------ against the stored values
    def stored_views(self, rows: Sequence[PreparedRow], olds: Sequence[Sequence[Any] | None]
                     ) -> list[dict[int, BlobView]]:
        """The stored documents a window's Pending values are settled by, read as the display
        reads them a column at a time (BlobReading.read: on the native core, the column's values
        in one call, each as the core read it; else the Python engine's views), by row: the
        written column's index -> its stored value's view. A value the reading gives no view of
        is left out (settle reads it alone, as before)."""
        from cqlsh_ext.payload.columns import ValueColumn

        out: list[dict[int, BlobView]] = [{} for _ in rows]
        for j, plan in enumerate(self.written):
            at: list[int] = []
            stored: list[bytes] = []
            for i, (prepared, old) in enumerate(zip(rows, olds, strict=True)):
                value = prepared.values[j]
                if old and old[j] and isinstance(value, Pending) and value.given.reference is None:
                    at.append(i)
                    stored.append(bytes(old[j]))
            if not at:
                continue
            read = self._stored_reading().read(ValueColumn(stored), plan.place)
            for i, view in zip(at, read.values(), strict=True):
                if isinstance(view, BlobView):
                    out[i][j] = view
        return out

    def settle(self, prepared: PreparedRow, old: Sequence[Any] | None,
               views: Mapping[int, BlobView] | None = None) -> None:
        """The row's values against its stored ones (`old`, the written columns' as read; None: no
        row; `views`: their documents as stored_views read them): each Pending document settled by
        the stored one and encoded (load.documents); a value that holds the stored document in the
        stored chain becomes the stored bytes, so the row counts as already as loaded and is not
        written. RowRefused: why not."""
        for j, plan in enumerate(self.written):
            if not plan.blob:
                continue
            stored = None if old is None or old[j] is None else bytes(old[j])
            value = prepared.values[j]
            if isinstance(value, Pending):  # (the stored document settled it: the same one is its bytes)
                view = None if views is None else views.get(j)
                prepared.values[j] = self._settled(plan, value, stored, prepared.unsaid, view)
                continue
            chain = prepared.chains[j]
            if stored is not None and isinstance(value, bytes) and value != stored and chain != AS_GIVEN:
                given = prepared.row.values[plan.position]  # its text or bytes, as the source gave them
                encoder = self._encoder(chain)
                source = given.data if given.data is not None else given.text
                if source is not None and not isinstance(encoder, str) and encoder.holds(stored, source):
                    prepared.values[j] = stored

    def _settled(self, plan: ColumnPlan, pending: Pending, stored: bytes | None, unsaid: list[str],
                 view: BlobView | None = None) -> bytes:
        """A Pending document settled by the stored one (the source's own stored bytes where it
        carries them, else the row's: `view`, its reading where stored_views made it) and encoded;
        the stored bytes themselves where the document is the stored one in the stored chain.
        Where no stored document settles it, what its source cannot say is added to `unsaid` (the
        preview counts it: docs/load.md)."""
        given, encoder = pending.given, pending.encoder
        reference = given.reference if given.reference is not None else stored
        # (stored_views makes a view only of a value without its own reference)
        read: bytes | BlobView | None = view if view is not None else reference
        try:
            found = self._stored_document(plan, read) if read is not None else None
            if found is None and given.tree is None:  # a record's JSON text, nothing to settle it by
                written = encoder.text(given.text or "").value
                if _records(encoder) and _names_floats(given.text or ""):
                    unsaid.append(UNSAID_NAMES)
                return written
            document = given.tree if given.tree is not None else json_record(given.text or "")
            if found is None:
                dropped: list[bool] = []
                document = without(fresh(document, given.frame and not given.nulls, dropped), given.absent)
                if dropped:
                    unsaid.append(UNSAID_NULLS)
            else:
                tree, spelt, chain, text = found
                written = without(settled(tree, spelt, document, given.frame, given.misfit, given.whole),
                                  given.absent)
                if written is tree and chain == encoder.chain:
                    assert reference is not None
                    return reference
                if text is not None and not _records(encoder):
                    # a document an edit changed, into JSON text: the values it leaves as stored are
                    # written as the stored text spells them (its numbers' digits, its escapes)
                    spelt_stored = spelt_tree(text)
                    if spelt_stored is not None:
                        written = without(settled(spelt_stored, spelt, document, given.frame, given.misfit,
                                                  given.whole), given.absent)
                document = written
            if _records(encoder):
                return encoder.record(record_of(document)).value
            return encoder.text(json_text(document)).value
        except EncodeRefused as err:
            raise RowRefused(f"{plan.name}: {encoder.chain}: {err}") from None
        except (TypeError, ValueError) as err:
            raise RowRefused(f"{plan.name}: {encoder.chain}: its document is not JSON ({err})") from None

    def changes(self, old: Sequence[Any] | None, prepared: PreparedRow) -> list[tuple[str, Any, Any]]:
        """What the row's write changes, as a preview shows it (edit.preview): each `path: old ->
        new` of a blob's document read from its stored bytes before and after (its chain too where
        that changes), a value whole where either holds no document (a new row's), a text
        column's value."""
        from cqlsh_ext.edit.document import REMOVE
        from cqlsh_ext.edit.preview import document_changes

        out: list[tuple[str, Any, Any]] = []
        for j, plan in enumerate(self.written):
            before = REMOVE if old is None or old[j] is None else old[j]
            after = REMOVE if prepared.values[j] is None else prepared.values[j]
            if not plan.blob:
                if before != after:
                    out.append((plan.name, before, after))
                continue
            if before is not REMOVE and after is not REMOVE and bytes(before) == bytes(after):
                continue
            (was, was_chain), (now, now_chain) = self._shown(plan, before), self._shown(plan, after)
            if was_chain and now_chain and was_chain != now_chain:
                out.append((f"{plan.name} (its chain)", was_chain, now_chain))
            out.extend(document_changes(plan.name, was, now))
        return out

    def _shown(self, plan: ColumnPlan, value: Any) -> tuple[Any, str]:
        """A blob's stored value as a preview shows it: its document and chain, else its bytes
        (no chain); a null (REMOVE) as it is."""
        if not isinstance(value, bytes | bytearray | memoryview):
            return value, ""
        found = self._stored_document(plan, bytes(value))
        return (found[0], found[2]) if found is not None else (bytes(value), "")

    def _stored_reading(self) -> BlobReading:
        """How the stored values are read: the display's reading of the columns (made once)."""
        if self._reading is None:
            from cqlsh_ext.payload.columns import BlobReading

            self._reading = BlobReading(self._decoding)
        return self._reading

    def _stored_document(self, plan: ColumnPlan, data: bytes | BlobView
                         ) -> tuple[Any, Any, str, str | None] | None:
        """A stored value's document as the display reads it (its record, or its JSON text's
        tree), as the exports spell it (BlobReading.blob_parts' payload), the chain its label
        names, and its JSON text (None: a record); None for a value that holds no document (text,
        bytes, a value cut or unread). `data`: its stored bytes, or its view (stored_views)."""
        reading = self._stored_reading()
        view = reading.view(data, plan.place)
        if view is None or view.kind not in (TEXT, RECORD) or view.cut or not view.label:
            return None
        tree = view.record if view.kind == RECORD else view.tree
        spelt = reading.blob_parts(view, plan.place)[0]
        encoder = self._encoder(label_chain(view.label, plan.setting))
        if tree is None or spelt is None or isinstance(encoder, str):
            return None
        return tree, spelt, encoder.chain, view.text if view.kind == TEXT else None

    def prepare(self, row: SourceRow) -> PreparedRow:
        """The row's key and values (RowRefused: why not)."""
        key = self.key_of(row)
        values, chains = self.values_of(row)
        return PreparedRow(row, key, (), values, chains)


def _names_floats(text: str) -> bool:
    """Whether a record's JSON text (JSON Lines') holds a string naming NaN or an infinity; False
    for a text that is no JSON (a stream's text: java's)."""
    try:
        return holds_float_names(json_record(text))
    except (ValueError, RecursionError):
        return False


def _refuse_twice(name: str, text: str) -> None:
    """RowRefused where a JSON text gives a key twice in one object (as a JSON Lines line is
    refused: docs/load.md), which JSON readers read as one of the two without a word; a text that
    is no JSON is left to the chain's writer to refuse."""
    from cqlsh_ext.payload.json_text import unique_pairs

    try:
        json.loads(text, object_pairs_hook=unique_pairs)
    except (ValueError, RecursionError) as err:
        if str(err).endswith("given twice in one object"):  # unique_pairs' (others: the writer's to say)
            raise RowRefused(f"{name}: its JSON text is refused ({err})") from None


def known_columns(meta: Any) -> frozenset[str]:
    """The names a source's column may have: the table's columns and the exports' companions of
    each (`data:label`, `total:note`: what the exports write beside a column)."""
    from cqlsh_ext.payload.columns import COMPANIONS

    return frozenset([*meta.columns, *(name + suffix for name in meta.columns for suffix in COMPANIONS),
                      *(f"{name}:{ABSENT}" for name in meta.columns)])


def stray_text(name: str, meta: Any, keyspace: str) -> str:
    """Why a source's column `name` (not a known_columns one) is refused: the nearest column named."""
    import difflib

    from cqlsh_ext.common.text import visible

    columns = list(meta.columns)
    near = difflib.get_close_matches(name, columns, n=1)
    hint = f"did you mean {near[0]}?" if near else f"its columns: {', '.join(columns)}"
    # (a file's header: any bytes at all, a terminal's escapes too)
    return f"{visible(name, 80)} is no column of {keyspace}.{meta.name} ({hint})"


def refuse_strays(names: Sequence[str], meta: Any, keyspace: str) -> None:
    """QueryError for the first of a source's columns (a file's, a frame's) that is neither a
    column of the table nor an export's companion of one, naming the nearest column: a misspelt
    column is never left out without a word."""
    from cqlsh_ext.cql.errors import QueryError

    known = known_columns(meta)
    for name in names:
        if name not in known:
            raise QueryError(stray_text(name, meta, keyspace))


def _records(encoder: Encoder) -> bool:
    """Whether the chain's payload is a record format (a tree is written as a record, not as text)."""
    payload = encoder.spec.payload
    return payload not in AS_IS and payload not in BUILTIN_READINGS


def _fixed(setting: str | None) -> str | None:
    """A column setting that names a chain (not auto mode, nor a chain picked row by row)."""
    if not setting or setting == "auto":
        return None
    from cqlsh_ext.payload.sibling import is_choice

    return None if is_choice(setting) else setting


@functools.lru_cache(maxsize=256)  # (a load asks it for each value: of a few labels and one setting)
def label_chain(label: str, setting: str | None) -> str:
    """The chain an export's label names (docs/load.md): a label's last step is how its payload
    reads; `binary` is bytes under the codecs before it, `text` after a serialization stream (java)
    is that stream's; a reading that takes an argument (avro:FILE.avsc) takes the column setting's
    where it names the same reading."""
    steps = label.split(">")
    last = steps[-1]
    if last == "binary":
        return ">".join(steps[:-1])
    if last == "text" and len(steps) > 1 and steps[-2] in STREAM_MAGICS.values():
        return ">".join(steps[:-1])
    if last in ARGUMENT_NAMES and setting:
        found = setting.split(">")[-1]
        if found.startswith(last + ":"):
            return ">".join([*steps[:-1], found])
    return label


def record_of(tree: Any) -> Any:
    """A document's tree as a record format's writer takes it: JSON text fields read, decimals as
    numbers."""
    if isinstance(tree, Fragment):
        return json.loads(tree)
    if isinstance(tree, dict):
        return {str(k): record_of(v) for k, v in tree.items()}
    if isinstance(tree, list | tuple):
        if _pairs(tree):
            return {k: record_of(v) for k, v in tree}  # an Arrow map's pairs
        return [record_of(v) for v in tree]
    if isinstance(tree, decimal.Decimal):
        return int(tree) if tree == tree.to_integral_value() else float(tree)
    return tree


def _pairs(value: Any) -> bool:
    """An Arrow map as pyarrow gives it: a list of (text key, value) pairs."""
    return isinstance(value, list) and bool(value) and all(
        isinstance(x, tuple) and len(x) == 2 and isinstance(x[0], str) for x in value)


def json_text(tree: Any) -> str:
    """A document's tree as compact JSON text (JSON text fields as they are, numbers as Python
    spells them, strings unescaped but for what JSON must escape)."""
    parts: list[str] = []
    _json(tree, parts)
    return "".join(parts)



def _json(value: Any, out: list[str]) -> None:
    # The common leaves first, spelt as json.dumps spells them (jsonenc.string, int.__repr__,
    # float.__repr__ for a finite float) without a json.dumps call a leaf (a document's leaves are
    # most of a load's walk); every other value through the checks below.
    kind = type(value)
    if kind is str:
        out.append(jsonenc.string(value))
    elif kind is int:
        out.append(int.__repr__(value))
    elif kind is float and jsonenc.float_name(value) is None:
        out.append(float.__repr__(value))
    elif isinstance(value, Fragment):
        out.append(str(value))
    elif isinstance(value, SPELT):  # a stored JSON text's value, left as stored: as it was spelt
        out.append(value.spelling)
    elif isinstance(value, dict):
        out.append("{")
        for i, (k, v) in enumerate(value.items()):
            out.append(("," if i else "") + jsonenc.string(str(k)) + ":")
            _json(v, out)
        out.append("}")
    elif isinstance(value, list | tuple):
        if _pairs(value):
            _json(dict(value), out)  # an Arrow map's pairs
            return
        out.append("[")
        for i, v in enumerate(value):
            if i:
                out.append(",")
            _json(v, out)
        out.append("]")
    elif isinstance(value, decimal.Decimal):
        out.append(str(value))
    elif isinstance(value, bytes | bytearray):
        out.append(json.dumps("0x" + bytes(value).hex()))
    elif isinstance(value, datetime.datetime | datetime.date | datetime.time):
        out.append(json.dumps(value.isoformat()))
    else:
        # NaN and the infinities as Python's json writes them (bare): the float the document holds
        out.append(json.dumps(value, ensure_ascii=False))


# ---------------------------------------------------------------------------------------- keys

INTEGER_TYPES = frozenset({"int", "bigint", "smallint", "tinyint", "varint"})
#: Key types a number's text is read into by key_from_text.
NUMBER_TYPES = INTEGER_TYPES | {"float", "double", "decimal"}
#: CQL's spellings of a key's value in text (a CSV field): ASCII digits (no "1_000", "+5", " 12",
#: "1e3" for an integer), a decimal number, NaN and the infinities by CQL's names, a UUID's 36
#: characters.
_INTEGER = re.compile(r"-?[0-9]+")
_NUMBER = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
#: (CQL names them as JSON does: common.jsonenc)
_FLOAT_NAMES = {jsonenc.float_name(v): v for v in (float("nan"), float("inf"), float("-inf"))}
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def cql_value(value: Any, cql_type: str) -> Any:
    """A source's key value as the driver takes a value of `cql_type`, exactly as the source's
    kind of value spells it: a JSON, Arrow or pandas value of the type (an integer for an int,
    never a float or a string; a number for a float; a boolean; text, ISO 8601 or cqlsh's time,
    a UUID's text, `0x...` for the types JSON has no value of), a CSV field (`CsvField`) or a JSON
    number's text (`NumberText`) read by key_from_text; ValueError or TypeError (saying what it is)
    when it is none."""
    if hasattr(value, "item") and not isinstance(value, bytes | str):  # numpy's scalars
        value = value.item()
    if isinstance(value, CsvField):
        return key_from_text(str(value), cql_type)
    if isinstance(value, NumberText):
        if cql_type in NUMBER_TYPES:
            return key_from_text(str(value), cql_type)
        # a time's milliseconds, a date's days: the number's value, as the other sources give it
        value = int(value) if _INTEGER.fullmatch(value) else float(value)
    if cql_type in TEXT_TYPES or cql_type == "inet":
        if not isinstance(value, str):
            raise TypeError(f"{_sort(value)}, not text")
        return value
    if cql_type in INTEGER_TYPES:
        if isinstance(value, int) and not isinstance(value, bool):
            return int(value)
        raise TypeError(f"{_sort(value)}, not an integer")
    if cql_type in ("float", "double", "decimal"):
        if isinstance(value, bool) or not isinstance(value, int | float | decimal.Decimal):
            raise TypeError(f"{_sort(value)}, not a number")
        if cql_type == "float":
            return _float32(decimal.Decimal(value))
        if cql_type == "double":
            return float(value)
        return decimal.Decimal(value if isinstance(value, int | decimal.Decimal) else repr(value))
    if cql_type == "boolean":
        if not isinstance(value, bool):
            raise TypeError(f"{_sort(value)}, not a boolean")
        return value
    return _typed_value(value, cql_type)


def _sort(value: Any) -> str:
    """What a value is, in a refusal's words."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a float"
    if isinstance(value, str):
        return "a string"
    return f"a {type(value).__name__}"


def key_from_text(text: str, cql_type: str) -> Any:
    """A key's value from its text (a CSV field, a JSON number as the line spells it), as CQL reads
    the literal: ASCII digits with a minus sign before for an integer (any length for a varint);
    a decimal exactly as spelt (its digits and scale: `1.00000000000000000001`, `1e-400`); a
    double or a float rounded once from the text to the nearest of its type, as Java's parseDouble
    and parseFloat round (a float never through a double first); NaN and the infinities by CQL's
    names; see cql_value for the other types."""
    if cql_type in TEXT_TYPES or cql_type == "inet":
        return text
    if cql_type in INTEGER_TYPES:
        if not _INTEGER.fullmatch(text):
            raise ValueError("not an integer as CQL spells it: ASCII digits, a minus sign before")
        return int(text)
    if cql_type in ("float", "double", "decimal"):
        if cql_type != "decimal" and text in _FLOAT_NAMES:
            return _FLOAT_NAMES[text]
        if not _NUMBER.fullmatch(text):
            raise ValueError("not a number as CQL spells it")
        if cql_type == "decimal":
            return decimal.Decimal(text)
        return float(text) if cql_type == "double" else _float32(decimal.Decimal(text))
    if cql_type == "boolean":
        if text.lower() not in ("true", "false"):
            raise ValueError("not true or false")
        return text.lower() == "true"
    return _typed_value(text, cql_type)


#: The largest float (32 bits) and half its last place: a number at or past their sum is infinite.
_FLOAT32_MAX = decimal.Decimal(struct.unpack("<f", b"\xff\xff\x7f\x7f")[0])
_FLOAT32_PAST = _FLOAT32_MAX + decimal.Decimal(2) ** 103


def _float32(exact: decimal.Decimal) -> float:
    """The float (32 bits) nearest `exact`, ties to even (Java's Float.parseFloat of its text), as
    the Python float holding it: rounded from the exact value once, where float32(float(text))
    rounds twice and may land one place off."""
    if not exact.is_finite():
        return float(exact)
    if abs(exact) >= _FLOAT32_PAST:
        return math.copysign(math.inf, exact)
    near = min(float(exact), float(_FLOAT32_MAX)) if exact > 0 else max(float(exact), -float(_FLOAT32_MAX))
    bits = struct.unpack("<I", struct.pack("<f", near))[0]
    # the float the double rounds to, and its neighbours: the nearest to the exact value is one of them
    candidates = [struct.unpack("<f", struct.pack("<I", b))[0] for b in (bits - 1, bits, bits + 1)
                  if 0 <= b < 0x7F800000 or 0x80000000 <= b < 0xFF800000]
    with decimal.localcontext() as ctx:
        ctx.prec = 2000  # a float's exact decimal value has at most ~150 significant digits
        return min(candidates, key=lambda c: (abs(decimal.Decimal(c) - exact),
                                              struct.unpack("<I", struct.pack("<f", c))[0] & 1))


def _typed_value(value: Any, cql_type: str) -> Any:
    """A UUID, a time, a date, a time of day or bytes: its own value, or its text."""
    if cql_type in ("uuid", "timeuuid"):
        if isinstance(value, uuid.UUID):
            return value
        if isinstance(value, bytes | bytearray) and len(value) == 16:
            return uuid.UUID(bytes=bytes(value))
        if isinstance(value, str) and _UUID.fullmatch(value):
            return uuid.UUID(value)
        raise ValueError("not a UUID as CQL spells it (8-4-4-4-12 hex digits)")
    if cql_type == "timestamp":
        return _timestamp(value)
    if cql_type == "date":
        if isinstance(value, datetime.datetime):
            return value.date()
        if isinstance(value, datetime.date):
            return value
        from cassandra.util import Date

        return Date(value if isinstance(value, int) and not isinstance(value, bool) else str(value))
    if cql_type == "time":
        from cassandra.util import Time

        if isinstance(value, datetime.time) or (isinstance(value, int) and not isinstance(value, bool)):
            return Time(value)
        return Time(str(value))
    if cql_type == "blob":
        if isinstance(value, bytes | bytearray):
            return bytes(value)
        if isinstance(value, str) and _HEX_KEY.fullmatch(value):
            return bytes.fromhex(value[2:])
        raise ValueError("not 0x and hex digits")
    raise TypeError(f"a {cql_type} is not read here")


_HEX_KEY = re.compile(r"0x(?:[0-9a-fA-F]{2})*")


#: The zone of a time the source gave without one (a naive datetime, ISO 8601 without an offset):
#: UTC, told apart from a UTC given so the figures count it (docs/load.md: the preview says so).
ASSUMED_UTC = datetime.timezone(datetime.timedelta(0), "UTC, assumed")


def assumed_utc(key: Sequence[Any]) -> bool:
    """Whether a key holds a time its source gave without a zone (taken as UTC)."""
    return any(isinstance(k, datetime.datetime) and k.tzinfo is ASSUMED_UTC for k in key)


def _timestamp(value: Any) -> datetime.datetime:
    if isinstance(value, datetime.datetime):
        return value if value.tzinfo is not None else value.replace(tzinfo=ASSUMED_UTC)
    if isinstance(value, int) and not isinstance(value, bool):  # milliseconds since the epoch
        epoch = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
        return epoch + datetime.timedelta(milliseconds=value)
    if not isinstance(value, str):
        raise TypeError(f"{_sort(value)}, not a time")
    text = value.replace(" ", "T", 1)
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    if len(text) > 5 and text[-5] in "+-" and text[-4:].isdigit():  # cqlsh's +0000
        text = text[:-2] + ":" + text[-2:]
    found = datetime.datetime.fromisoformat(text)
    return found if found.tzinfo is not None else found.replace(tzinfo=ASSUMED_UTC)


def _brief(value: Any) -> str:
    if isinstance(value, NumberText):
        return value if len(value) <= 40 else value[:37] + "..."
    text = json.dumps(value, default=repr, ensure_ascii=False) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
