"""The MCP server's smaller pieces alone (no server): the input bounds, hints in the tools' terms,
the rate limit, the audit line (no value in it), the HTTP set-up's rules and the stdio message
bound, and the pieces the typed answers will use: cursors bound to their statement, and an
answer's size measured on what the SDK sends."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cqlsh_ext.cql.lexer import Lexed
from cqlsh_ext.mcp_server import audit, bounds, hints, sizing, transport
from cqlsh_ext.mcp_server.answers import ToolAnswer, failed
from cqlsh_ext.mcp_server.cursor import CursorError, Cursors, statement_hash
from cqlsh_ext.mcp_server.ratelimit import RateLimit

# ------------------------------------------------------------------------------------- bounds


def test_bounds_refuse_in_one_line_and_let_the_rest_through() -> None:
    keys = ", ".join(str(10**9 + i) for i in range(20_000))
    big = f"SELECT * FROM ks.t WHERE id IN ({keys})"
    with pytest.raises(bounds.TooLarge) as err:
        bounds.check_arguments({"statement": big})
    assert str(err.value).startswith("refused: a statement of 240,031 bytes is more than cqlsh-ext mcp reads "
                                     "(128 KiB)")
    within = "SELECT * FROM ks.t WHERE id IN (" + ", ".join(str(i) for i in range(3000)) + ")"
    bounds.check_arguments({"statement": within})  # 17 KB: the size passes; cqlsh's tokens do not
    bounds.check_tokens(Lexed(within).tokens)  # the shell's lexer's, a looser bound
    with pytest.raises(bounds.TooLarge, match=r"6,010 tokens \(2,999 commas\), more than cqlsh-ext mcp"):
        _counted(within)
    _counted("SELECT * FROM ks.t WHERE id IN (" + ", ".join("1" * 2000) + ")")
    uuids = ", ".join(f"00000000-0000-1000-8000-{i:012d}" for i in range(2000))
    _counted(f"SELECT * FROM ks.t WHERE id IN ({uuids})")  # a UUID is one
    with pytest.raises(bounds.TooLarge, match="nested more than 64 deep"):
        bounds.check_tokens(Lexed("SELECT " + "f(" * 65 + "x" + ")" * 65 + " FROM t").tokens)
    with pytest.raises(bounds.TooLarge, match="the table argument"):
        bounds.check_arguments({"table": "t" * 5000})
    with pytest.raises(bounds.TooLarge, match="entries"):
        bounds.check_arguments({"decode": {f"c{i}": "zstd" for i in range(100)}})


def _counted(text: str) -> None:
    """The bound of cqlsh's tokens, on the shell's lexer's tokens of one statement counted as cqlsh's."""
    bounds.check_counted_tokens(text, Lexed(text).tokens[:-1])


# -------------------------------------------------------------------------------------- hints


def test_hints_name_what_the_assistant_can_do() -> None:
    said = ("hint: 1 value in no known format: if you know what they hold, DECODE 'ks.t.data' AS "
            "'zstd>msgpack' (or --decode ks.t.data=zstd>msgpack) reads them so")
    out = hints.for_assistant(said)
    assert "DECODE" not in out and '{"data": "zstd>msgpack"}' in out and "decode argument" in out
    verdict = ("Verdict: stored uncompressed (6.9 MiB): COMPRESSION ADVISE measures what client-side "
               "compression would save in storage, COMPRESSION TRIAL what it does to latency.")
    assert hints.for_assistant(verdict) == ("Verdict: stored uncompressed (6.9 MiB): compression_advise "
                                            "measures what client-side compression would save in storage.")
    stats = ("Verdict: client-side compression saves 53 % of storage (22.3 KiB stored for 47.0 KiB); "
             "COMPRESSION TRIAL measures what it does to latency on this cluster; 21 of 40 values are not "
             "compressed.")
    assert hints.for_assistant(stats) == ("Verdict: client-side compression saves 53 % of storage (22.3 KiB "
                                          "stored for 47.0 KiB); 21 of 40 values are not compressed.")
    assert "HELP" not in hints.for_assistant("a path takes =, != (HELP QUERIES)")
    stored = [{"values": [{"value": "HELP QUERIES"}]}]
    report = {"verdict": verdict, "places": [{"hint": said, "paths": stored}],
              "rows": [{"note": "COMPRESSION TRIAL"}], "verdicts": {"data": verdict}}
    hints.report(report)
    assert "TRIAL" not in report["verdict"] and "DECODE" not in report["places"][0]["hint"]
    assert "TRIAL" not in report["verdicts"]["data"]
    # Stored values are left as they are.
    assert report["places"][0]["paths"][0]["values"][0]["value"] == "HELP QUERIES"
    assert report["rows"][0]["note"] == "COMPRESSION TRIAL"


# --------------------------------------------------------------------------------- rate limit


def test_the_rate_limit_counts_the_last_minute() -> None:
    now = [1000.0]
    limit = RateLimit(3, clock=lambda: now[0])
    assert [limit.take() for _ in range(3)] == [None, None, None]
    refused = limit.take()
    assert refused is not None and refused.startswith("refused: more than 3 calls a minute")
    assert "served in 60.0 s" in refused
    now[0] += 59.9
    assert limit.take() is not None
    now[0] += 0.2
    assert limit.take() is None


# ------------------------------------------------------------------------------------- audit


def test_an_audit_line_holds_no_value(tmp_path: Path) -> None:
    log = audit.AuditLog(str(tmp_path / "audit.log"))
    secret = "Sekr1t-value-9931"
    statement = f"SELECT data.status FROM shop.orders WHERE data.customer.email = '{secret}' ALLOW FILTERING"
    log.record("query", {"statement": statement}, ToolAnswer(data={"rows": [{"data.status": secret}]}),
               False, 0.25)
    log.record("describe_payload", {"column": "shop.orders.data", "where": f"data.token = '{secret}'"},
               failed("refused: the policy ..."), False, 0.001)
    log.record("query", {"statement": f"SELECT * FROM t WHERE k = {31337}"}, None, True, 60.0)
    log.close()
    text = (tmp_path / "audit.log").read_text()
    assert secret not in text and "31337" not in text
    first, second, third = (json.loads(line) for line in text.splitlines())
    assert first["statement"]["words"] == "SELECT data . status FROM shop . orders"
    assert first["decision"] == "answered" and first["rows"] == 1 and first["bytes"] > 0
    assert second["decision"] == "refused" and second["arguments"] == {"column": "shop.orders.data"}
    assert third["decision"] == "stopped"
    assert oct(os.stat(tmp_path / "audit.log").st_mode & 0o777) == "0o600"


# ---------------------------------------------------------------------------------- transport


def test_http_addresses_and_what_they_need(tmp_path: Path) -> None:
    assert transport.parse_address("8765") == ("127.0.0.1", 8765)
    assert transport.parse_address("0.0.0.0:8765") == ("0.0.0.0", 8765)
    assert transport.parse_address("[::1]:8765") == ("::1", 8765)
    for bad in ("host:", "::1:80", "x:99999", "abc"):
        with pytest.raises(transport.TransportError):
            transport.parse_address(bad)
    transport.check(transport.HttpOptions("127.0.0.1", 1))  # loopback: no token needed
    with pytest.raises(transport.TransportError, match="needs a token"):
        transport.check(transport.HttpOptions("0.0.0.0", 1))
    with pytest.raises(transport.TransportError, match="needs TLS"):
        transport.check(transport.HttpOptions("0.0.0.0", 1, token="t" * 20))
    transport.check(transport.HttpOptions("0.0.0.0", 1, token="t" * 20, private_network=True))
    with pytest.raises(transport.TransportError, match="go together"):
        transport.check(transport.HttpOptions("0.0.0.0", 1, token="t" * 20, tls_cert="c.pem"))
    token_file = tmp_path / "token"
    token_file.write_text("a-token-of-enough-length\nignored\n")
    assert transport.read_token(None, str(token_file)) == "a-token-of-enough-length"
    with pytest.raises(transport.TransportError, match="at least 16"):
        transport.read_token("short", None)


def test_a_stdio_message_over_the_bound_is_refused_by_its_id() -> None:
    read, write = os.pipe()
    lines = transport.BoundedLines(read, limit=1024)
    big = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                      "params": {"name": "query", "arguments": {"statement": "x" * 5000}}})
    small = json.dumps({"jsonrpc": "2.0", "id": 8, "method": "tools/list"})

    def feed() -> None:
        with os.fdopen(write, "wb") as f:
            f.write((big + "\n" + small + "\n").encode())

    threading.Thread(target=feed).start()
    first = json.loads(lines._read() or "")
    assert first["id"] == 7 and first["params"]["name"] == transport.OVERSIZED
    assert first["params"]["arguments"]["why"].startswith("refused: a message of 0.0 MiB")
    assert json.loads(lines._read() or "")["id"] == 8
    assert lines._read() is None


# ------------------------------------------------------------------------------------ cursors


def test_a_cursor_continues_only_its_statement_and_only_here() -> None:
    import base64

    cursors = Cursors()
    statement = "SELECT * FROM ks.t WHERE pk = 'a'"
    token = cursors.issue(statement, b"\x00\x01state", {"answered": 100, "skip": 7}, now=1000, owner=b"one")
    state = cursors.open(token, "select *  FROM ks.t  -- same\n WHERE pk = 'a'", now=1001, owner=b"one")
    assert state.paging_state == b"\x00\x01state" and state.extra == {"answered": 100, "skip": 7}
    # It carries an id, never what it continues (the rows before it, where on its page: a count of
    # what a policy left out), and is only for the client it was given to.
    raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    assert len(raw) == 1 + 4 + 16 + 16 + 16 and b"answered" not in raw and b"state" not in raw
    with pytest.raises(CursorError, match="given to another client"):
        cursors.open(token, statement, now=1001, owner=b"two")
    token = cursors.issue(statement, b"\x00\x01state", {"answered": 100}, now=1000)
    with pytest.raises(CursorError, match="another statement"):
        cursors.open(token, "SELECT * FROM ks.t WHERE pk = 'b'", now=1001)
    with pytest.raises(CursorError, match="not a cursor of this server"):
        Cursors().open(token, statement, now=1001)  # another server's secret
    tampered = token[:-6] + ("A" if token[-6] != "A" else "B") + token[-5:]
    with pytest.raises(CursorError, match="not a cursor of this server"):
        cursors.open(tampered, statement, now=1001)
    with pytest.raises(CursorError, match="expired"):
        cursors.open(token, statement, now=1000 + 3601)
    with pytest.raises(CursorError):
        cursors.open("%%%", statement)
    assert statement_hash('SELECT "A" FROM t') != statement_hash("SELECT a FROM t")


# ------------------------------------------------------------------------------ answer sizes


def test_an_answer_is_measured_as_the_sdk_sends_it() -> None:
    from mcp import types

    note = 'quote " backslash \\ newline \n é '
    rows = [{"id": i, "note": note * (i % 5), "n": i * 1.5} for i in range(200)]
    head: dict[str, object] = {"statement": "SELECT ...", "count": 0, "cut": None, "rows": []}
    data = {**head, "rows": rows}
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    result = types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                  structured_content=data, is_error=False)
    sent = result.model_dump_json(by_alias=True, exclude_unset=True)
    envelope = len('{"content":[{"type":"text","text":}],"structuredContent":,"isError":false}')
    assert sizing.answer_size([text], data) == len(sent.encode()) - envelope
    # each row adds its row_cost (a comma in each of the two places, the first row following none)
    empty = sizing.answer_size([sizing.compact(head).decode()], head)
    costs = sum(sizing.row_cost(sizing.compact(row)) for row in rows)
    assert sizing.answer_size([text], data) == empty + costs - 2
    cut, cuts = sizing.cut_value({"rows": [{"v": "x" * 5000}]}, 100, None)
    assert cut["rows"][0]["v"] == "x" * 100 + "…" and cuts == ["rows[0].v: 100 of 5,000 characters"]
    assert sizing.prefix("SELECT 1") == "SELECT 1"
    long = "SELECT * FROM t /* " + "x" * 300_000 + " */"
    assert len(sizing.prefix(long)) < 200 and "300,022 bytes" in sizing.prefix(long)


_LEAVES = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
                    st.text(max_size=12))
_VALUES = st.recursive(_LEAVES, lambda inner: st.one_of(
    st.lists(inner, max_size=6), st.dictionaries(st.text(max_size=4), inner, max_size=6)), max_leaves=30)


def _largest(value: object) -> tuple[int, int]:
    """The longest string and the most entries of any array or object in `value` (the oracle)."""
    if isinstance(value, str):
        return len(value), 0
    parts = list(value.values()) if isinstance(value, dict) else value if isinstance(value, list) else []
    found = [_largest(part) for part in parts]
    return max([0, *(c for c, _ in found)]), max([len(parts), *(n for _, n in found)])


@settings(max_examples=300, deadline=None)
@given(_VALUES, st.integers(min_value=0, max_value=12), st.one_of(st.none(), st.integers(0, 6)))
def test_a_value_is_cut_exactly_where_a_string_or_an_entry_is_over_its_limit(
        value: object, chars: int, items: int | None) -> None:
    # cut_value's fast path (a walk that copies nothing) must agree with the cut it spares.
    longest, most = _largest(value)
    over = longest > chars or (items is not None and most > items)
    cut, said = sizing.cut_value(value, chars, items)
    assert bool(said) == over
    if not over:
        assert cut is value
    else:
        assert _largest(cut)[0] <= chars + 1 and (items is None or _largest(cut)[1] <= items)


# ------------------------------------------------------------------- the core's rows of an answer

_ROW_TEXT = st.text(st.characters(codec="utf-8", exclude_characters="\n"), max_size=40)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_ROW_TEXT, st.booleans()), min_size=1, max_size=12))
def test_the_core_answers_each_row_and_its_escapes(values: list[tuple[str, bool]]) -> None:
    # An answer's rows as the core lays them out (native.answer_rows): each row's line without its
    # newline, None for a row holding a NUL (the Python side spells it), and the quotes and
    # backslashes escaping it inside a JSON string adds (the answer's size counts them: row_cost),
    # against the lines made and counted here.
    from cqlsh_ext.payload import native

    assert native.available()
    texts = [text + ("\0" if nul else "") for text, nul in values]
    lines, escapes = native.answer_rows(['{"v":', texts, ',"w":"\\\\"}\n'], len(texts), (2000, 1000))
    expected = [None if "\0" in text else f'{{"v":{text},"w":"\\\\"}}'.encode() for text in texts]
    assert lines == expected
    assert escapes == [0 if line is None else line.count(b'"') + line.count(b"\\") for line in expected]


_JSON_TEXT = st.text(st.characters(codec="utf-8"))
_JSON_VALUE = st.recursive(st.none() | st.booleans() | st.integers() | _JSON_TEXT,
                           lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(_JSON_TEXT, inner, max_size=4), max_leaves=12)


@pytest.mark.parametrize("core", [True, False], ids=["core", "python"])
@settings(max_examples=200, deadline=None)
@given(value=_JSON_VALUE)
def test_a_json_text_escaped_is_the_inside_of_its_json_string(core: bool, value: object) -> None:
    # stdio's text block is the answer's JSON escaped as the inside of a JSON string
    # (columns.json_text_escaped, by the core or by Python): json.dumps' spelling of that string.
    from cqlsh_ext.payload import columns, native

    body = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
    assert native.available()
    escaped = columns.json_text_escaped(body) if core else _python_escaped(body)
    assert escaped == json.dumps(body.decode(), ensure_ascii=False)[1:-1].encode()


def _python_escaped(body: bytes) -> bytes:
    """columns.json_text_escaped with the core off (its Python road)."""
    from unittest import mock

    from cqlsh_ext.payload import columns, native

    with mock.patch.object(native, "available", return_value=False):
        return columns.json_text_escaped(body)
