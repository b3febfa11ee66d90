"""The read-only gate of `cqlsh-ext mcp`, alone (no server): every write attempt of writes.py
refused in one line, every read let through with its kind; the tools' name arguments cannot carry
a statement; an answer takes rows up to the limit and the byte cap, measured on the JSON sent."""

from __future__ import annotations

import pytest

from cqlsh_ext.features.arguments import Invalid, names
from cqlsh_ext.mcp_server import gate
from cqlsh_ext.mcp_server.answers import LIMIT, Taker, ToolAnswer

from .writes import READS, WRITES

FIELDS = {"t": "ks.orders", "ks": "ks", "dir": "/tmp/nowhere"}


def test_kinds_read_as_written() -> None:
    kinds = {read: gate.read(read.format(**FIELDS)).kind for read in READS}
    assert kinds["DESCRIBE PAYLOAD {t}.data SAMPLE 5"] == gate.DESCRIBE_PAYLOAD
    assert kinds["DESC KEYSPACES"] == gate.DESCRIBE
    assert kinds["COMPRESSION ADVISE SAMPLE 10 {t}"] == "COMPRESSION ADVISE"
    assert kinds["INSPECT JSON SELECT data FROM {t} WHERE id = 1"] == gate.INSPECT
    assert {kinds[r] for r in READS[:7]} == {gate.SELECT}


def test_a_tool_taking_selects_refuses_other_reads() -> None:
    with pytest.raises(gate.Refused, match="this tool takes one SELECT, not DESCRIBE"):
        gate.read("DESCRIBE TABLES", {gate.SELECT})
    with pytest.raises(gate.Refused, match="no statement"):
        gate.read("  -- nothing but a comment", {gate.SELECT})


@pytest.mark.parametrize("given", ["ks.t; DROP TABLE ks.t", "ks.t\nDROP TABLE ks.t", "ks.t WHERE 1 = 1",
                                   "ks.'t'", "ks..t", "ks.t.", ".t", "ks.t.c", "ks t", 7])
def test_a_table_argument_is_names_only(given: object) -> None:
    with pytest.raises(Invalid):
        names(given, (1, 2), "table")


def test_names_are_spelt_as_the_schema_spells_them() -> None:
    assert names('Shop."Orders"', (2,), "table") == ["shop", "Orders"]
    assert names('ks.t."Data; DROP TABLE x"', (3,), "column") == ["ks", "t", "Data; DROP TABLE x"]
    assert names("ks", (1,), "keyspace") == ["ks"]


def _rows(n: int, width: int = 10) -> list[dict[str, object]]:
    return [{"n": i, "pad": "x" * width} for i in range(n)]


def test_an_answer_is_cut_at_the_limit_and_says_so() -> None:
    taker = Taker("rows", 3, 1 << 20, {"statement": "SELECT n, pad FROM ks.t"})
    assert all(taker.take(row) for row in _rows(3))  # exactly the limit: not cut
    assert taker.taken.cut is None and len(taker.items) == 3
    assert not taker.take({"n": 3})
    assert taker.taken.cut == LIMIT
    answer = taker.finish({"notes": []}).fit()
    assert answer.data is not None and answer.data["count"] == 3
    assert answer.data["cut"].startswith("at the limit of 3 rows")


def _sent(answer: ToolAnswer) -> int:
    """The bytes of the JSON-RPC line the SDK writes for `answer` (stdio), its newline apart."""
    from mcp import types

    result = types.CallToolResult(content=[types.TextContent(type="text", text=t) for t in answer.texts()],
                                  structured_content=answer.data, is_error=answer.is_error)
    body = result.model_dump_json(by_alias=True, exclude_unset=True)
    return len(f'{{"jsonrpc":"2.0","id":123456789,"result":{body}}}'.encode())


def test_an_answer_keeps_to_its_cap_as_sent() -> None:
    taker = Taker("rows", None, 4096, {"statement": "SELECT n, pad FROM ks.t"})
    rows = _rows(100, width=100)
    kept = 0
    while taker.take(rows[kept]):
        kept += 1
    answer = taker.finish({"notes": ["payload query: 100 rows read"]}).fit()
    assert answer.data is not None and answer.data["rows"] == rows[:answer.data["count"]]
    assert 0 < answer.data["count"] <= kept < 100 and answer.data["cut"].startswith("at 4,096 bytes")
    assert _sent(answer) <= answer.size() <= 4096
    # A value longer than the answer: cut inside it, the cut said, the row kept.
    alone = Taker("rows", None, 2048, {"statement": "SELECT pad FROM ks.t"})
    assert alone.take({"pad": "x" * 5000})
    answer = alone.finish({"notes": []}).fit()
    assert answer.data is not None and answer.data["rows"][0]["pad"] == "x" * 500 + "…"
    assert answer.data["values_cut"] == ["rows[0].pad: 500 of 5,000 characters"]
    assert _sent(answer) <= 2048
    # A row of too many values to fit even cut: none taken, and the answer says why.
    wide = Taker("rows", None, 1024, {"statement": "SELECT * FROM ks.t"})
    assert not wide.take({f"column_{i}": i for i in range(200)})
    answer = wide.finish({"notes": []}).fit()
    assert answer.data is not None and answer.data["count"] == 0
    assert answer.data["cut"].startswith("the first of the rows alone is more than 1,024 bytes")


def test_an_answer_of_rows_is_sent_as_its_rows_were_spelt() -> None:
    # Each row's JSON is spelt once as it is taken; the text block joins those bytes. It must be
    # the structured content's own compact JSON, byte for byte, and measured as the SDK sends it,
    # whatever the values hold (quotes, backslashes, control characters, non-ASCII, a long value
    # cut, a note) and after rows are given back to fit.
    import json

    from mcp import types

    from cqlsh_ext.mcp_server import sizing
    from cqlsh_ext.mcp_server.server import _result

    odd = 'quote " backslash \\ tab \t nul \x00 del \x7f é 漢 \u2028'
    taker = Taker("rows", None, 6000, {"statement": 'SELECT "n", v FROM ks.t'})
    taken = 0
    while taker.take({"n": taken, "v": {"note": odd * (taken % 4), "list": [1.5, None, True]},
                      "long": "y" * (2500 if taken == 2 else 1)}):
        taken += 1
    answer = taker.finish({"notes": ['a note "quoted"']}, notes=["said"]).fit()
    assert answer.data is not None and 2 < answer.data["count"] <= taken
    assert answer.data["values_cut"] == ["rows[2].long: 2,000 of 2,500 characters"]
    text = answer.texts()[0]
    head, spelt, *notes, tail = text.split("\n")
    assert spelt == json.dumps(answer.data, ensure_ascii=False, separators=(",", ":"))
    # The summary first and last: what the answer is, as its JSON says it (a value was cut: not exact).
    summary = {"rows": answer.data["count"], "exact": False, "truncated": answer.data["truncated"],
               "cursor": answer.data.get("cursor")}
    assert head == tail == json.dumps({"summary": summary}, ensure_ascii=False, separators=(",", ":"))
    assert notes == ["said"] and answer.data["truncated"]
    assert answer.size() == sizing.message_size(answer.texts(), answer.data)
    assert _sent(answer) <= answer.size() <= 6000
    # The wire dict the server hands the SDK is the result the model would have made.
    model = types.CallToolResult(content=[types.TextContent(type="text", text=t) for t in answer.texts()],
                                 structured_content=answer.data, is_error=False)
    assert types.CallToolResult.model_validate(_result(answer), by_name=False) == model


@pytest.mark.parametrize("attempt", WRITES)
def test_a_write_attempt_to_query_is_refused_on_the_shells_tokens_alone(attempt: str) -> None:
    # `query`'s statement is run by the reading, never by cqlsh: its tokens are the shell's lexer's.
    # A write is refused as one, in one line; what is no statement at all is said to be a syntax error.
    with pytest.raises(gate.Refused) as refused:
        gate.read(attempt.format(**FIELDS), {gate.SELECT})
    line = str(refused.value)
    assert line.startswith(("refused: ", "syntax error")) and "\n" not in line, line


def test_a_select_is_sent_as_the_text_of_its_tokens() -> None:
    sent = {read: gate.read(read.format(**FIELDS), {gate.SELECT}).text for read in READS[:7]}
    assert sent["SELECT $$;$$ FROM {t};;"] == "SELECT $$;$$ FROM ks.orders"
    assert sent["SELECT * FROM {t} -- a comment at the end"] == "SELECT * FROM ks.orders"
    assert sent["/* a comment first */ SELECT id FROM {t}"] == "SELECT id FROM ks.orders"
    assert sent["select data FROM {t} WHERE id = 1;"] == "select data FROM ks.orders WHERE id = 1"


def _sdk_line(result: dict[str, object], version: str) -> str:
    """The line the SDK's stdio writer makes of a tools/call result (its sieve, then the message's JSON)."""
    from mcp.types import JSONRPCResponse
    from mcp_types import methods

    dumped = methods.serialize_server_result("tools/call", version, result)
    return JSONRPCResponse(jsonrpc="2.0", id=7, result=dumped).model_dump_json(by_alias=True,
                                                                               exclude_unset=True)


@pytest.mark.parametrize("version", ["2025-06-18", "2026-07-28"])
def test_stdio_writes_the_spelt_json_as_the_sdk_would_write_the_tree(version: str) -> None:
    # On stdio the SDK is handed a stand-in for the structured content and the writer puts the
    # answer's spelt JSON in its place: the line must be the one the SDK writes from the tree, byte
    # for byte, whatever the values hold; an answer the SDK would spell otherwise (a float of a
    # small exponent) is left to the SDK, its line unchanged too. A float JSON cannot hold (NaN, the
    # infinities) is spelt by its name on both roads.
    import os

    import anyio

    from cqlsh_ext.mcp_server.server import _result
    from cqlsh_ext.mcp_server.transport import SpeltWriter

    odd = 'quote " backslash \\ tab \t nul \x00 del \x7f é 漢 \u2028 😀 {"x":1}'
    # (value, spliced): a UUID's "808e-0de3" or a string's "NaN" is no float the SDK spells otherwise
    values = [({"v": odd, "n": [1.5, 12, -0.0, 1e16, 1e-10, 0.0001, 2**70, None, True], "o": {}}, True),
              ({"id": "b4e22ae0-a838-11ee-808e-0de30de30de3", "v": "NaN or Infinity, 1e-05 or so"}, True),
              ({"v": "small", "f": 1.5e-07}, False), ({"v": "small", "f": [-1e-05]}, False),
              ({"v": "not a number", "f": float("nan")}, True), ({"f": {"i": float("-inf")}}, True)]
    read, write = os.pipe()
    writer = SpeltWriter(write)
    for value, spliced_here in values:
        taker = Taker("rows", None, 6000, {"statement": "SELECT v FROM ks.t"})
        assert taker.take(value)
        answer = taker.finish({"notes": []}, notes=[f"said {odd}"]).fit()  # (the text block's frame)
        expected = _sdk_line(_result(answer), version) + "\n"
        body = answer.body()
        assert body is not None
        spliced = _result(answer, lambda body, frame: writer.stand_in(version, body, frame))
        # stand-ins (no tree for the SDK to walk, no answer for it to escape), or the answer: the
        # SDK's own road
        assert (spliced["structuredContent"] != answer.data) == spliced_here, value
        assert (spliced["content"][0]["text"] != answer.texts()[0]) == spliced_here, value

        async def send(line: str) -> None:
            await writer.write(line)
            await writer.flush()

        anyio.run(send, _sdk_line(spliced, version) + "\n")
        sent = os.read(read, 1 << 16).decode()
        assert sent == expected
    os.close(read)


@pytest.mark.parametrize("version", ["2025-06-18", "2026-07-28"])
def test_a_lone_surrogate_is_sent_as_u_fffd_said_and_never_ends_the_server(version: str) -> None:
    # A stored JSON document may hold "\\ud800" (valid JSON, no Unicode): its string reaches the
    # answer with a lone surrogate, which the SDK's serializer cannot write (it ended the server)
    # and whose JSON escape the SDK's client cannot read. It is sent as U+FFFD on both roads, the
    # text block and the structured content alike, and said in values_cut; a float JSON cannot hold
    # by its name.
    import json
    import os

    import anyio

    from cqlsh_ext.mcp_server.server import _result
    from cqlsh_ext.mcp_server.transport import SpeltWriter

    value = {"v": "lone \ud800 here", "pair": "\U0001f600", "n": float("inf")}
    taker = Taker("rows", None, 6000, {"statement": "SELECT v FROM ks.t"})
    assert taker.take(value)
    answer = taker.finish({"notes": []}, notes=["said"]).fit()
    text = answer.texts()[0]
    sent_as = {"v": "lone \ufffd here", "pair": "\U0001f600", "n": "Infinity"}
    data = json.loads(text.split("\n")[1])
    assert data["rows"][0] == sent_as
    assert data["values_cut"] == ["rows[0]: 1 lone surrogate (no Unicode character, which the protocol's "
                                  "JSON cannot carry) sent as U+FFFD"]

    sdk_line = json.loads(_sdk_line(_result(answer), version))  # the SDK's own road: written
    assert sdk_line["result"]["content"][0]["text"] == text
    assert sdk_line["result"]["structuredContent"] == data

    read, write = os.pipe()
    writer = SpeltWriter(write)
    spliced = _result(answer, lambda body, frame: writer.stand_in(version, body, frame))
    assert spliced["structuredContent"] != answer.data  # a stand-in: written from the text block

    async def send(line: str) -> None:
        await writer.write(line)
        await writer.flush()

    anyio.run(send, _sdk_line(spliced, version) + "\n")
    sent = os.read(read, 1 << 16)
    os.close(read)
    assert sent.decode() == json.dumps(sdk_line, ensure_ascii=False, separators=(",", ":")) + "\n"
