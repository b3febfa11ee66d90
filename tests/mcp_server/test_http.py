"""`cqlsh-ext mcp --http`: the SDK's Streamable HTTP transport at /mcp, driven by the SDK's own HTTP
client as an assistant on another host drives it: the same answers as over stdio; a bearer token
refused without it or when wrong, accepted from the command line, a file or the environment; TLS,
and client certificates (mutual TLS); and the set-ups it refuses to serve (an address other than
loopback without a token, or without TLS unless the network is said to be private). Its connections
bounded, from raw sockets on several loopback addresses: a head or a body that stops is cut, and idle
connections filling every slot lock out neither a token holder nor /healthz."""

from __future__ import annotations

import datetime
import socket
import ssl
import subprocess
from collections import Counter
from pathlib import Path

import httpx2
import pytest
from mcp.shared.exceptions import MCPError
from shell_runner import CQLSH_EXT, isolated_env

from .conftest import ASSISTANT, ASSISTANT_PASSWORD, Demo
from .harness import HttpMcpServer, answer_json, write_credentials

pytestmark = pytest.mark.server

TOKEN = "Http-Token-For-The-Tests-0123456789"


def _start(demo: Demo, home: Path, *args: str, env: dict[str, str] | None = None,
           host: str = "127.0.0.1") -> HttpMcpServer:
    """The server on the demo's Cassandra, HOME `home` (its credentials log in as the assistant)."""
    write_credentials(home, ASSISTANT, ASSISTANT_PASSWORD)
    return HttpMcpServer([*demo.conn, *args], home, env, host)


def test_the_token_is_refused_and_accepted_and_the_answers_are_stdios(demo: Demo, assistant_home: Path,
                                                                      serve) -> None:
    token_file = assistant_home / "token"
    token_file.write_text(TOKEN + "\n")
    token_file.chmod(0o600)
    stdio = serve().call("list_tables", keyspace=demo.keyspace).data
    with _start(demo, assistant_home, "--token-file", str(token_file)) as server:
        with server.client({"Authorization": f"Bearer {TOKEN}"}) as client:
            assert client.call("list_tables", keyspace=demo.keyspace).data == stdio
            assert [t.name for t in client.tools()][:2] == ["list_keyspaces", "list_tables"]
        for headers in ({}, {"Authorization": f"Bearer {TOKEN[:-1]}x"}, {"Authorization": TOKEN},
                        {"Authorization": f"Basic {TOKEN}"}):
            response = httpx2.post(server.url, headers={**headers, "Content-Type": "application/json",
                                                        "Accept": "application/json, text/event-stream"},
                                   json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
            assert response.status_code == 401, headers
            assert response.headers["www-authenticate"].startswith('Bearer error="invalid_token"')
            said = response.json()["error"]["message"]
            assert said.startswith("unauthorized: ") and "bearer token" in said, said
            # The SDK's client hands it on as the error it is (it once said only "Server returned an
            # error response"), inside the exception groups of its task groups.
            with pytest.raises(BaseException) as refused, server.client(headers) as client:
                client.call("list_keyspaces")
            errors = [e for e in _leaves(refused.value) if isinstance(e, MCPError)]
            assert errors and errors[0].error.message == said, [repr(e) for e in _leaves(refused.value)]
            assert TOKEN not in said
        assert TOKEN not in server.log.read_text()
    # From the environment, and on the command line (which warns that others can read it).
    with _start(demo, assistant_home / "env", env={"CQLSH_EXT_MCP_TOKEN": TOKEN}) as server:
        with server.client({"Authorization": f"Bearer {TOKEN}"}) as client:
            assert client.call("list_keyspaces").data["count"] > 0
    with _start(demo, assistant_home / "argv", "--token", TOKEN) as server:
        with server.client({"Authorization": f"Bearer {TOKEN}"}) as client:
            assert client.call("list_keyspaces").data["count"] > 0
        assert "a token on the command line is visible to other users" in server.log.read_text()


def _leaves(error: BaseException) -> list[BaseException]:
    """The exceptions inside (exception groups of) exception groups."""
    inner = getattr(error, "exceptions", None)  # an exception group (the backport's on Python 3.10)
    if isinstance(inner, tuple):
        return [leaf for each in inner for leaf in _leaves(each)]
    return [error]


def test_without_a_token_on_loopback_it_serves(demo: Demo, assistant_home: Path) -> None:
    with _start(demo, assistant_home) as server, server.client() as client:
        answer = client.call("query", statement=f"SELECT count(*) FROM {demo.keyspace}.blob_formats")
        assert answer.data["rows"] == [{"count": 20}]
        # The SDK's guard against DNS rebinding on a loopback address: another Host is refused.
        response = httpx2.post(server.url, headers={"Host": "attacker.example:80",
                                                    "Accept": "application/json",
                                                    "Content-Type": "application/json"},
                               json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert response.status_code in (400, 403, 421)


def test_stdio_and_http_send_the_same_answer(demo: Demo, assistant_home: Path, serve) -> None:
    # stdio writes an answer's structured content from its spelt JSON (transport.SpeltWriter), HTTP
    # lets the SDK write it from the tree: the same answer either way, and on stdio the structured
    # content is the text block's bytes as they are.

    table = f"{demo.keyspace}.table_with_compressed_json"
    calls = [("query", {"statement": f"SELECT id, data FROM {table} LIMIT 12", "max_bytes": 9000}),
             ("query", {"statement": f"SELECT id, data.status, data.items FROM {table} LIMIT 5"}),
             ("query", {"statement": f"SELECT * FROM {demo.keyspace}.blob_formats"}),
             ("describe_table", {"table": table})]
    stdio_server = serve()
    stdio = [stdio_server.call(tool, **arguments) for tool, arguments in calls]
    with _start(demo, assistant_home) as server, server.client() as client:
        http = [client.call(tool, **arguments) for tool, arguments in calls]
    def uncursored(texts: list[str]) -> list[str]:  # (each server draws its cursors' own secret)
        cursor = answer_json(texts[0]).get("cursor")
        return [t.replace(cursor, "<cursor>") for t in texts] if cursor else texts

    for by_stdio, by_http in zip(stdio, http, strict=True):
        assert uncursored(by_stdio.texts) == uncursored(by_http.texts)
        assert answer_json(by_stdio.texts[0]) == by_stdio.structured and by_http.data == by_http.structured
    wire = stdio_server.wire.read_bytes().decode()
    for answer in stdio:
        spelt = answer.texts[0].split("\n")[1]  # the answer's JSON line in its text block
        assert '"structuredContent":' + spelt + "}" in wire or '"structuredContent":' + spelt + "," in wire
    assert answer_json(stdio[0].texts[0])["cut"] and answer_json(stdio[0].texts[0])["cursor"]


def test_what_no_json_number_or_utf8_string_holds_is_answered_on_both_roads(cassandra, demo: Demo,
                                                                            assistant_home: Path,
                                                                            serve) -> None:
    # A stored document's number past the double's range (1e400) and its lone surrogate's escape
    # ("\ud800": valid JSON, no Unicode). The lone surrogate ended the server on either road (the
    # SDK cannot write it, and its client cannot read its escape). Now: the number by its name,
    # "Infinity", as every JSON of ours spells a double JSON cannot hold (not json.dumps' bare
    # Infinity, which a strict client cannot read); the lone surrogate as U+FFFD, said in
    # values_cut; the same answer on both roads; and the server answers the next call.
    import json

    def strict(text: str) -> object:
        def refused(name: str) -> object:
            raise AssertionError(f"{name} is no JSON")
        return json.loads(text, parse_constant=refused)

    # (a keyspace of its own: the demo's tables are counted by other tests)
    table = f"{cassandra.create_keyspace('mcp_beyond_json')}.t"
    documents = {1: '{"big": 1e400, "small": -1e400, "s": "lone \\ud800 here", "ok": 1.5}',
                 2: '{"s": "\\udc00"}'}
    session = cassandra.session()
    session.execute(f"CREATE TABLE IF NOT EXISTS {table} (id int PRIMARY KEY, data blob)")
    for key, document in documents.items():
        session.execute(f"INSERT INTO {table} (id, data) VALUES (%s, %s)", (key, document.encode()))
    session.shutdown()
    call = ("query", {"statement": f"SELECT id, data FROM {table}"})
    stdio_server = serve()
    by_stdio = stdio_server.call(call[0], **call[1])
    again = stdio_server.call("query", statement=f"SELECT id FROM {table}")
    with _start(demo, assistant_home) as server, server.client() as client:
        by_http = client.call(call[0], **call[1])
        http_again = client.call("query", statement=f"SELECT id FROM {table}")
    assert again.data["count"] == http_again.data["count"] == 2
    assert by_stdio.texts == by_http.texts
    answer = strict(by_stdio.texts[0].split("\n")[1])
    assert isinstance(answer, dict)
    rows = {row["id"]: row["data"]["payload"] for row in answer["rows"]}
    assert rows == {1: {"big": "Infinity", "small": "-Infinity", "s": "lone \ufffd here", "ok": 1.5},
                    2: {"s": "\ufffd"}}
    assert len(answer["values_cut"]) == 2 and all("sent as U+FFFD" in said for said in answer["values_cut"])
    assert by_stdio.data == answer and by_http.data == answer


def test_another_loopback_address_is_served_by_its_own_name(demo: Demo, assistant_home: Path) -> None:
    # --http 127.0.0.2:PORT: a client reaches it as 127.0.0.2:PORT, the Host header it sends (once 421).
    with _start(demo, assistant_home, host="127.0.0.2") as server, server.client() as client:
        assert server.url.startswith("http://127.0.0.2:")
        assert client.call("list_tables", keyspace=demo.keyspace).data["count"] == 4
        for host in (f"127.0.0.2:{server.port}", f"localhost:{server.port}"):
            response = httpx2.post(server.url, json=_INITIALIZE, headers={
                "Host": host, "Accept": "application/json, text/event-stream",
                "Content-Type": "application/json"})
            assert response.status_code == 200, (host, response.text)
        response = httpx2.post(server.url, headers={"Host": f"127.0.0.3:{server.port}", "Content-Type":
                                                    "application/json", "Accept": "application/json"},
                               json=_INITIALIZE)
        assert response.status_code == 421  # another address: DNS rebinding's, refused


_INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                          "clientInfo": {"name": "test", "version": "0"}}}


def test_a_deeply_nested_or_oversized_message_gets_a_json_rpc_error(demo: Demo, assistant_home: Path) -> None:
    # 100,000 brackets inside one another: an error naming why, and the next call answered. A body
    # past 4 MiB: 413 with a JSON-RPC error.
    import json

    from cqlsh_ext.mcp_server.bounds import MAX_MESSAGE_BYTES

    with _start(demo, assistant_home) as server, server.client() as client:
        oversized = _connect(server.port)
        oversized.sendall(_head(server.port, "Connection: close\r\n", MAX_MESSAGE_BYTES + 1)
                          + b" " * (MAX_MESSAGE_BYTES + 1))
        status, _, body = _told(oversized).partition(b"\r\n\r\n")
        assert status.startswith(b"HTTP/1.1 413 ")
        assert json.loads(body)["error"]["message"] == "refused: a request body of more than 4 MiB"
        body = ('{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "query", '
                '"arguments": {"statement": ' + "[" * 100_000 + "]" * 100_000 + "}}}")
        response = httpx2.post(server.url, content=body.encode(), headers={
            "Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
        assert response.status_code == 400
        error = response.json()["error"]
        assert error["code"] == -32700 and "recursion limit" in error["message"], error
        assert client.call("list_tables", keyspace=demo.keyspace).data["count"] == 4


@pytest.mark.parametrize("args, said", [
    (["--http", "0.0.0.0:1"], "an address other than loopback needs a token"),
    (["--http", "0.0.0.0:1", "--token", TOKEN], "an address other than loopback needs TLS"),
    (["--http", "127.0.0.1:1", "--token", "short"], "the token must be at least 16 characters"),
    (["--http", "127.0.0.1:1", "--tls-cert", "c.pem"], "--tls-cert and --tls-key go together"),
    (["--http", "nonsense"], "--http takes PORT, HOST:PORT"),
    (["--token-file", "t"], "go with --http"),
    (["--http-body-timeout", "5"], "go with --http"),
    (["--http", "127.0.0.1:1", "--http-body-timeout", "0"], "--http-body-timeout must be above 0"),
])
def test_an_unguarded_set_up_is_refused_in_one_line(args: list[str], said: str, tmp_path: Path) -> None:
    proc = subprocess.run([CQLSH_EXT, "mcp", "127.0.0.1", "9", *args], input="", capture_output=True,
                          text=True, timeout=60, env=isolated_env(tmp_path))
    lines = [line for line in proc.stderr.splitlines()
             if line.strip() and "visible to other users" not in line]
    assert proc.returncode == 2 and len(lines) == 1 and said in lines[0], proc.stderr
    assert TOKEN not in proc.stderr


def test_a_private_network_serves_with_a_token_on_any_address(demo: Demo, assistant_home: Path) -> None:
    server = _start(demo, assistant_home, "--private-network", env={"CQLSH_EXT_MCP_TOKEN": TOKEN},
                    host="0.0.0.0")
    with server, server.client({"Authorization": f"Bearer {TOKEN}"}) as client:
        assert client.call("list_keyspaces").data["count"] > 0


def _certificates(directory: Path) -> dict[str, Path]:
    """A CA, a server certificate for 127.0.0.1 and a client certificate, both signed by the CA."""
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = datetime.datetime.now(datetime.timezone.utc)

    def make(name: str, issuer: tuple[x509.Name, ec.EllipticCurvePrivateKey] | None, ca: bool,
             usage: x509.ObjectIdentifier | None) -> tuple[x509.Name, ec.EllipticCurvePrivateKey]:
        key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        issuer_name, issuer_key = issuer or (subject, key)
        builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer_name)
                   .public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(minutes=5))
                   .not_valid_after(now + datetime.timedelta(days=1))
                   .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
        if usage is not None:
            builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        if name == "127.0.0.1":
            builder = builder.add_extension(
                x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                critical=False)
        cert = builder.sign(issuer_key, hashes.SHA256())
        (directory / f"{name}.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        (directory / f"{name}.key").write_bytes(key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
        return subject, key

    ca = make("test-ca", None, True, None)
    make("127.0.0.1", ca, False, ExtendedKeyUsageOID.SERVER_AUTH)
    make("assistant", ca, False, ExtendedKeyUsageOID.CLIENT_AUTH)
    return {name: directory / f"{name}.pem" for name in ("test-ca", "127.0.0.1", "assistant")}


def test_tls_and_client_certificates(demo: Demo, assistant_home: Path, tmp_path: Path) -> None:
    certs = _certificates(tmp_path)
    server_cert, server_key = certs["127.0.0.1"], tmp_path / "127.0.0.1.key"
    auth = {"Authorization": f"Bearer {TOKEN}"}
    env = {"CQLSH_EXT_MCP_TOKEN": TOKEN}
    with _start(demo, assistant_home, "--tls-cert", str(server_cert), "--tls-key", str(server_key),
                env=env) as server:
        url = server.url.replace("http://", "https://")
        trusting = ssl.create_default_context(cafile=str(certs["test-ca"]))
        with server.client(auth, url=url, verify=trusting) as client:
            assert client.call("list_keyspaces").data["count"] > 0
        with pytest.raises(Exception), server.client(auth) as client:  # noqa: B017 - plain HTTP to a TLS port
            client.call("list_keyspaces")
    with _start(demo, assistant_home / "mtls", "--tls-cert", str(server_cert), "--tls-key", str(server_key),
                "--tls-client-ca", str(certs["test-ca"]), env=env) as server:
        url = server.url.replace("http://", "https://")
        context = ssl.create_default_context(cafile=str(certs["test-ca"]))
        context.load_cert_chain(str(certs["assistant"]), str(tmp_path / "assistant.key"))
        with server.client(auth, url=url, verify=context) as client:
            assert client.call("list_keyspaces").data["count"] > 0
        with pytest.raises(Exception), server.client(auth, url=url, verify=trusting) as client:  # noqa: B017
            client.call("list_keyspaces")  # no client certificate: the handshake fails


def test_a_port_in_use_ends_the_server_in_one_line(demo: Demo, assistant_home: Path) -> None:
    import socket

    write_credentials(assistant_home, ASSISTANT, ASSISTANT_PASSWORD)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = subprocess.run([CQLSH_EXT, "mcp", *demo.conn, "--http", f"127.0.0.1:{port}"], input="",
                              capture_output=True, text=True, timeout=120, env=isolated_env(assistant_home))
    assert proc.returncode == 1
    said = proc.stderr.splitlines()[-1]
    assert said == f"cqlsh-ext mcp: could not listen on 127.0.0.1:{port} (in use, or not this host's)"


def _connect(port: int, address: str = "127.0.0.1") -> socket.socket:
    """A raw connection to the server (on 127.0.0.1) from `address` (any 127.0.0.x on Linux)."""
    return socket.create_connection(("127.0.0.1", port), timeout=300, source_address=(address, 0))


def _told(connection: socket.socket) -> bytes:
    """Everything the server sends on `connection` until it closes it (then closed here too)."""
    answer = b""
    try:
        while chunk := connection.recv(4096):
            answer += chunk
    except ConnectionResetError:
        pass
    connection.close()
    return answer


def _open(connection: socket.socket) -> bool:
    """Whether the server still holds `connection` and has said nothing on it: a read would wait."""
    connection.setblocking(False)
    try:
        connection.recv(1, socket.MSG_PEEK)
    except BlockingIOError:
        return True
    finally:
        connection.setblocking(True)
    return False


def _head(port: int, extra: str = "", length: int = 100) -> bytes:
    """A POST's request head to /mcp with `extra` header lines, announcing a body of `length` bytes."""
    return (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
            f"Accept: application/json, text/event-stream\r\nContent-Length: {length}\r\n{extra}"
            "\r\n").encode()


def test_slow_request_heads_are_cut_and_one_address_holds_its_share_of_connections(
        demo: Demo, assistant_home: Path) -> None:
    # Connections that send half a request head and wait: the address keeps its newest
    # UNPROVEN_PER_CLIENT (each closed by the server at last: 408 after http_bounds.HEAD_SECONDS),
    # each one past them closing its oldest (503). Counted by the connections closed, each read to
    # its end; the server answers on.
    from cqlsh_ext.mcp_server import http_bounds

    opened = http_bounds.PER_CLIENT + 8
    with _start(demo, assistant_home) as server:
        held = [_connect(server.port) for _ in range(opened)]
        for connection in held:
            try:
                connection.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: applic"
                                   % server.port)
            except OSError:  # closed already for a newer one: told below
                pass
        said = Counter(_told(connection).split(b"\r\n", 1)[0] for connection in held)
        kept = http_bounds.UNPROVEN_PER_CLIENT
        assert said == {b"HTTP/1.1 408 Request Timeout": kept,
                        b"HTTP/1.1 503 Service Unavailable": opened - kept}, said
        with server.client() as client:
            assert client.call("list_keyspaces").data["count"] > 0
        log = server.log.read_text()
        assert f"closed 1 HTTP connection: {http_bounds.ADDRESS_UNPROVEN}" in log
        assert f"a request's head did not arrive whole within {http_bounds.HEAD_SECONDS:g} s" in log


def test_idle_connections_lock_out_neither_a_token_holder_nor_healthz(demo: Demo,
                                                                      assistant_home: Path) -> None:
    # The attack: 64 idle connections from each of 127.0.0.2-9, then 16 from each of 127.0.0.10-41, all
    # the server's 512 slots and more. Before, a client with the token (and /healthz) was answered 503
    # for as long as they were held. Now an address keeps 16 not authenticated, and a new connection
    # closes the oldest not authenticated: the token holder and /healthz are served while the newest
    # idle ones are still open; connections that authenticated are never closed for room.
    from cqlsh_ext.mcp_server import http_bounds

    auth = {"Authorization": f"Bearer {TOKEN}"}
    auth_line = f"Authorization: Bearer {TOKEN}\r\n"
    with _start(demo, assistant_home, env={"CQLSH_EXT_MCP_TOKEN": TOKEN}) as server:
        # An address with 64 requests that authenticated (each waiting for its body, the server told
        # so as it asks for the body: 100 Continue) holds all 64; its 65th connection is refused.
        authenticated = []
        for _ in range(http_bounds.PER_CLIENT):
            connection = _connect(server.port, "127.0.0.50")
            connection.sendall(_head(server.port, f"{auth_line}Expect: 100-continue\r\n"))
            assert connection.recv(64).startswith(b"HTTP/1.1 100 Continue")
            authenticated.append(connection)
        refused = _told(_connect(server.port, "127.0.0.50")).decode()
        assert refused.startswith("HTTP/1.1 503 Service Unavailable") and refused.endswith(
            f"closed: {http_bounds.ADDRESS_FULL}\n"), refused
        # The idle connections.
        first = [_connect(server.port, f"127.0.0.{n}") for n in range(2, 10) for _ in range(64)]
        second = [_connect(server.port, f"127.0.0.{n}") for n in range(10, 42) for _ in range(16)]
        with server.client(auth) as client:
            assert client.call("list_tables", keyspace=demo.keyspace).data["count"] == 4
        health = httpx2.get(server.url.removesuffix("/mcp") + "/healthz")
        assert (health.status_code, health.text) == (200, "ok\n")
        # Served while the slots were full: the newest idle connections still open, none of the
        # authenticated ones closed.
        still = [connection for connection in second if _open(connection)]
        assert all(_open(connection) for connection in authenticated)
        room = http_bounds.TOTAL - len(authenticated)
        # The client's connections and /healthz's each closed one more of the oldest.
        assert room - 8 <= len(still) < room, len(still)
        told = Counter(_told(connection).decode().rsplit("closed: ", 1)[-1].strip()
                       for connection in first + [c for c in second if c not in still])
        assert told == {http_bounds.ADDRESS_UNPROVEN: 8 * (64 - http_bounds.UNPROVEN_PER_CLIENT),
                        http_bounds.FULL_UNPROVEN: 8 * http_bounds.UNPROVEN_PER_CLIENT
                        + len(second) - len(still)}, told
        for connection in authenticated + still:
            connection.close()
        with server.client(auth) as client:  # and on
            assert client.call("list_keyspaces").data["count"] > 0
        log = server.log.read_text()
    for why in (http_bounds.ADDRESS_FULL, http_bounds.ADDRESS_UNPROVEN, http_bounds.FULL_UNPROVEN):
        assert f"cqlsh-ext mcp: closed 1 HTTP connection: {why}\n" in log, why
    assert "Traceback" not in log and TOKEN not in log


def test_a_token_holders_slow_body_is_cut_and_a_steady_one_is_not(demo: Demo, assistant_home: Path) -> None:
    # nginx's client_body_timeout: a body that makes no progress for --http-body-timeout seconds is
    # cut (408, its connection closed, one line in the log; no traceback, the request run nowhere);
    # one that arrives a piece at a time, each well within it, takes longer than the timeout in all
    # and is answered. A client that goes before its body's end is answered nothing, said nowhere.
    import json
    import time

    timeout = 3.0
    auth = f"Authorization: Bearer {TOKEN}\r\n"
    with _start(demo, assistant_home, "--http-body-timeout", f"{timeout:g}",
                env={"CQLSH_EXT_MCP_TOKEN": TOKEN}) as server:
        slow = _connect(server.port)
        slow.sendall(_head(server.port, auth, 200) + b'{"jsonrpc": "2.0", ')
        # Held while the body may still come (the first piece came: no refusal at once), then
        # closed by the timer alone: a 408 naming it, and the log's one line (counted below).
        assert _open(slow)
        answer = _told(slow).decode()  # the event: the server closes it
        assert answer.startswith("HTTP/1.1 408 Request Timeout")
        assert answer.endswith(f"closed: a request's body made no progress for {timeout:g} s\n"), answer

        body = json.dumps(_INITIALIZE).encode()
        steady = _connect(server.port)
        steady.sendall(_head(server.port, auth, len(body)))
        pieces = [body[i:i + len(body) // 8 + 1] for i in range(0, len(body), len(body) // 8 + 1)]
        for piece in pieces:
            time.sleep(timeout / 6)  # the pace of a slow link (4 s in all), not a wait for the server
            steady.sendall(piece)
        answered = b""
        while b'"protocolVersion"' not in answered and (chunk := steady.recv(65536)):
            answered += chunk
        steady.close()
        assert answered.decode().startswith("HTTP/1.1 200 OK") and b'"protocolVersion"' in answered, answered

        gone = _connect(server.port)
        gone.sendall(_head(server.port, auth, 200) + b'{"jsonrpc": ')
        gone.close()
        with server.client({"Authorization": f"Bearer {TOKEN}"}) as client:
            assert client.call("list_keyspaces").data["count"] > 0
        log = server.log.read_text()
    assert log.count("closed 1 HTTP connection: a request's body made no progress") == 1, log
    assert "Traceback" not in log and "Error handling POST request" not in log, log


def test_a_token_holders_trickling_body_is_cut_at_its_whole_deadline(demo: Demo,
                                                                     assistant_home: Path) -> None:
    # A byte every half of --http-body-timeout: progress each time, yet the body must arrive whole
    # within http_bounds.BODY_WHOLE times the timeout (a byte every 2 s held a slot past 66 s).
    import threading
    import time

    from cqlsh_ext.mcp_server import http_bounds

    timeout = 1.0
    whole = timeout * http_bounds.BODY_WHOLE
    auth = f"Authorization: Bearer {TOKEN}\r\n"
    with _start(demo, assistant_home, "--http-body-timeout", f"{timeout:g}",
                env={"CQLSH_EXT_MCP_TOKEN": TOKEN}) as server:
        slow = _connect(server.port)
        slow.sendall(_head(server.port, auth, 10_000))
        closed = threading.Event()

        def trickle() -> None:
            while not closed.is_set():
                try:
                    slow.sendall(b" ")
                except OSError:  # the server closed it
                    return
                time.sleep(timeout / 2)  # the client's pace, not a wait for the server

        sender = threading.Thread(target=trickle, daemon=True)
        sender.start()
        answer = _told(slow).decode()  # the event: the server closes it
        closed.set()
        sender.join()
        log = server.log.read_text()
    assert answer.startswith("HTTP/1.1 408 Request Timeout"), answer
    assert answer.endswith(f"closed: a request's body did not arrive whole within {whole:g} s\n"), answer
    assert f"closed 1 HTTP connection: a request's body did not arrive whole within {whole:g} s" in log, log
    assert "Traceback" not in log, log


def test_a_cursor_is_continued_only_by_the_client_it_was_given_to(demo: Demo, assistant_home: Path) -> None:
    statement = f"SELECT name FROM {demo.keyspace}.blob_formats"
    with _start(demo, assistant_home) as server, server.client() as one, server.client() as other:
        first = one.call("query", statement=statement, limit=5).data
        assert first["count"] == 5 and first["cursor"]
        refused = other.call("query", statement=statement, limit=5, cursor=first["cursor"])
        assert refused.is_error and refused.error == (
            "refused: cursor: this cursor was given to another client (another MCP session, or another "
            "OAuth identity): run the statement again")
        rest = one.call("query", statement=statement, limit=100, cursor=first["cursor"]).data
        names = [row["name"] for row in first["rows"] + rest["rows"]]
        assert len(names) == len(set(names)) == 20  # the client it was given to goes on where it was cut
