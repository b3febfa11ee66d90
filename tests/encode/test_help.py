"""HELP ENCODE through the binary, and the chain steps completed inside encode('."""

from __future__ import annotations

from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from shell_runner import CQLSH_EXT, run

from cqlsh_ext.repl.completer import CqlCompleter


def test_help_encode(cassandra, tmp_path):
    result = run(CQLSH_EXT, [*cassandra.cqlsh_args, "-e", "HELP ENCODE"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert "encode() [cqlsh-ext]" in result.stdout and "cqlsh-ext docs payloads" in result.stdout
    listing = run(CQLSH_EXT, [*cassandra.cqlsh_args, "-e", "HELP"], tmp_path).stdout
    assert "ENCODE" in listing


def completions(text: str) -> list[str]:
    # The chain is completed before cqlsh's grammar is asked: no shell or rule set is needed.
    found = CqlCompleter(None, None).get_completions(Document(text), CompleteEvent(completion_requested=True))
    return [c.text for c in found]


def test_chain_steps_complete_inside_encode():
    assert completions("INSERT INTO t (id, data) VALUES (1, encode('zstd>ms") == ["msgpack"]
    assert completions("UPDATE t SET data = ENCODE( 'snappy/x") == ["snappy/xerial"]
    assert "lz4/frame" in completions("INSERT INTO t (id, data) VALUES (1, encode('lz")
    assert completions("INSERT INTO t (id, data) VALUES (1, encode('zstd:1") == []
