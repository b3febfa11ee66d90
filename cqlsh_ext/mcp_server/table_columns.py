"""What describe_table says of a table: its CQL (what DESCRIBE TABLE prints), and its columns: type,
key, and the payloads they hold: blobs (cql.types: a blob column, or blobs inside a collection,
tuple or UDT), and text columns outside the primary key that hold JSON, told from a few rows
(scanning.scan.one_page: one request) by the value engine, the one thing that reads a stored value
(payload.engine)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cqlsh_ext.reading.context import ReadContext
    from cqlsh_ext.reading.resolve import TableTarget

BLOB, BLOBS_INSIDE, JSON_TEXT, TEXT = "blob", "blobs inside", "JSON text", "text"


def table_cql(ctx: ReadContext, target: TableTarget, server_major: int,
              hidden: Callable[[str, str], bool] = lambda keyspace, name: False) -> str | None:
    """The table's CQL as DESCRIBE TABLE prints it: the server's own DESCRIBE (Cassandra 4 and
    later: its rows' create_statement, each between empty lines, as cqlsh prints them), else the
    driver's metadata (a 3.x server, Amazon Keyspaces: as the shell's client-side DESCRIBE,
    cqlsh_ext.keyspaces.describe). A materialized view of the table that `hidden(keyspace, name)`
    says the policy hides is left out. None when the server refuses (ctx.error said why)."""
    if server_major < 4:
        return str(target.meta.export_as_string()).strip()
    from cassandra import ConsistencyLevel
    from cassandra.metadata import protect_name

    from cqlsh_ext.reading.statement import read_statement

    text = f"DESCRIBE TABLE {protect_name(target.keyspace)}.{protect_name(target.name)}"
    answer = read_statement(ctx, text, consistency=ConsistencyLevel.LOCAL_ONE)
    if answer is None:
        return None
    at = answer.names.index("create_statement")
    kind, name = answer.names.index("type"), answer.names.index("name")
    kept = [row[at] for batch in answer for row in batch
            if not (row[kind] == "materialized_view" and hidden(target.keyspace, str(row[name])))]
    return "".join(f"\n{statement}\n" for statement in kept).strip()


def columns(ctx: ReadContext, target: TableTarget, sample_rows: int,
            blob_samples: bool = False) -> list[dict[str, Any]]:
    """Each column of the table: name, type, key, holds (`sample_rows` 0: no value read, a text
    column's is "text"); with `blob_samples`, each blob column's `sample` too (held()), read in the
    same request as the text columns'."""
    from cqlsh_ext.cql.types import parse

    meta, udts = target.meta, target.schema.udts
    keys = {c.name: "partition" for c in meta.partition_key}
    keys.update({c.name: "clustering" for c in meta.clustering_key})
    described: list[dict[str, Any]] = []
    texts: list[dict[str, Any]] = []
    blobs: list[dict[str, Any]] = []
    for name, column in meta.columns.items():
        cqltype = parse(column.cql_type, udts)
        entry: dict[str, Any] = {"name": name, "type": column.cql_type, "key": keys.get(name)}
        if cqltype.is_blob:
            entry["holds"] = BLOB
            if blob_samples:
                blobs.append(entry)
        elif cqltype.holds():
            entry["holds"] = BLOBS_INSIDE
        elif cqltype.is_text and name not in keys:
            entry["holds"] = TEXT
            texts.append(entry)
        else:
            entry["holds"] = None
        described.append(entry)
    if (texts or blobs) and sample_rows:
        _sample(ctx, target, texts, blobs, sample_rows)
    return described


def _sample(ctx: ReadContext, target: TableTarget, texts: list[dict[str, Any]], blobs: list[dict[str, Any]],
            sample_rows: int) -> None:
    """One request of `sample_rows` rows: the text columns whose values hold JSON marked ("JSON
    text", with the counts), and each blob column's values read (held())."""
    from cassandra.metadata import protect_name

    from cqlsh_ext.payload.engine import ValueEngine
    from cqlsh_ext.scanning.scan import error_text, one_page

    sampled = texts + blobs
    query = (f"SELECT {', '.join(protect_name(e['name']) for e in sampled)} FROM "
             f"{protect_name(target.keyspace)}.{protect_name(target.name)} LIMIT {sample_rows}")
    try:
        rows = one_page(ctx.session, query, sample_rows, ctx.timeout or 10.0, ctx.consistency)
    except Exception as err:  # noqa: BLE001 -- said in its place; the rest of the answer stands
        for entry in sampled:
            entry["sample"] = f"not read: {error_text(err)}"
        return
    for entry in texts:
        values = [row[entry["name"]].encode() for row in rows if row[entry["name"]]]
        engine = ValueEngine(cap=ctx.display.cap)
        json_values = sum(1 for view in engine.views(values) if view.label == "json")
        entry["sample"] = {"values_read": len(values), "json": json_values}
        if values and json_values == len(values):
            entry["holds"] = JSON_TEXT
    for entry in blobs:
        values = [bytes(row[entry["name"]]) for row in rows if row[entry["name"]] is not None]
        entry["sample"] = held(values, ctx.display.cap)


def held(values: list[bytes], cap: int) -> dict[str, Any]:
    """What `values` hold, as the value engine reads them: the most frequent label's chain, format
    and confidence, its share of the values, and every label with its count."""
    from cqlsh_ext.payload.confidence import view_confidence
    from cqlsh_ext.payload.engine import ValueEngine

    views = ValueEngine(cap=cap).views(values)
    decoded = [view for view in views if view.reading is not None]
    labels = Counter(view.label for view in decoded)
    first: dict[str, Any] = {}
    for view in decoded:
        first.setdefault(view.label, view)
    out: dict[str, Any] = {"values": len(views), "undecodable": len(views) - len(decoded)}
    if not labels:
        return {**out, "chain": None, "format": None, "label": None, "confidence": None, "share": 0.0,
                "labels": []}
    top, count = labels.most_common(1)[0]
    view = first[top]
    out.update(chain=list(view.chain), format=view.reading, label=top, confidence=view_confidence(view),
               share=round(count / len(views), 3),
               labels=[{"label": label, "values": n, "confidence": view_confidence(first[label])}
                       for label, n in labels.most_common()])
    return out
