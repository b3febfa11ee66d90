"""connect() reads what the shell reads, as cqlsh reads it: cqlshrc's [connection] hostname, port
and ssl, [authentication] keyspace, username and password, the credentials file beside the
cqlshrc, [ssl]; an argument given wins. The same cqlshrc given to the real binary reads the same
table."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import devcassandra
import pytest
from shell_runner import CQLSH_EXT, isolated_env

import cqlsh_ext

from .conftest import COUNT, Orders

pytestmark = pytest.mark.server


def _cqlshrc(directory: Path, text: str) -> str:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "cqlshrc"
    path.write_text(text)
    path.chmod(0o600)  # cqlsh warns of a password in a cqlshrc others can read
    return str(path)


def _credentials(path: Path, username: str, password: str) -> None:
    path.write_text(f"[PlainTextAuthProvider]\nusername = {username}\npassword = {password}\n")
    path.chmod(0o600)


def test_a_cqlshrc_alone_names_the_server_the_keyspace_and_the_login(cassandra, orders: Orders,
                                                                     tmp_path: Path):
    """cqlshrc's host, port and keyspace, the login from the credentials file beside it (the file
    cqlsh reads by default): connect(cqlshrc=path) with no other argument reads the keyspace's
    table by its name alone, as the shell given the same file does."""
    rc = _cqlshrc(tmp_path / "rc", f"[connection]\nhostname = {cassandra.host}\nport = {cassandra.port}\n\n"
                                   f"[authentication]\nkeyspace = {orders.ks}\n")
    _credentials(tmp_path / "rc" / "credentials", cassandra.username, cassandra.password)
    with cqlsh_ext.connect(cqlshrc=rc) as db:
        assert db.keyspace == orders.ks
        keys = {(row["pk"], row["ck"]) for row in db.query("SELECT pk, ck FROM orders")}
    assert keys == {(row["pk"], row["ck"]) for row, _ in orders.rows} and len(keys) == COUNT
    shell = subprocess.run([CQLSH_EXT, "--cqlshrc", rc, "-e", "SELECT count(*) FROM orders"],
                           capture_output=True, text=True, timeout=300, env=isolated_env(tmp_path / "home"))
    assert shell.returncode == 0 and re.search(rf"^\s*{COUNT}\s*$", shell.stdout, re.M), shell.stderr


def test_cqlshrc_s_own_login_and_arguments_that_win(cassandra, orders: Orders, tmp_path: Path):
    """[authentication] username and password (cqlsh still reads them there); an argument given
    wins over cqlshrc: the keyspace, the port (a port alone keeps cqlshrc's host)."""
    rc = _cqlshrc(tmp_path / "rc", f"[connection]\nhostname = {cassandra.host}\nport = {cassandra.port}\n\n"
                                   f"[authentication]\nkeyspace = {orders.ks}\n"
                                   f"username = {cassandra.username}\npassword = {cassandra.password}\n")
    with cqlsh_ext.connect(cqlshrc=rc) as db:
        assert len(list(db.query("SELECT pk FROM orders LIMIT 7"))) == 7
    with cqlsh_ext.connect(cqlshrc=rc, keyspace="system_schema") as db:
        assert db.keyspace == "system_schema"
        names = {row["keyspace_name"] for row in db.query("SELECT keyspace_name FROM keyspaces")}
        assert orders.ks in names
    (nothing,) = devcassandra.free_ports(1)  # nobody listens there
    for given in ({"port": nothing}, {"host": cassandra.host, "port": nothing}):
        with pytest.raises(cqlsh_ext.Error) as refused:
            cqlsh_ext.connect(cqlshrc=rc, **given)
        said = f"Connection error: nothing listens on {cassandra.host}:{nothing}: "
        assert str(refused.value).startswith(said)
    with pytest.raises(cqlsh_ext.Error, match=r"^port takes a port number \(1 to 65535\), not '9042'$"):
        cqlsh_ext.connect(cqlshrc=rc, port="9042")  # type: ignore[arg-type]


def test_cqlshrc_s_ssl_is_spoken_and_its_refusals_are_cqlsh_s(cassandra, tmp_path: Path):
    """[connection] ssl = true: the connection speaks TLS, as cqlsh's does (the test server's port
    does not: the line says so, naming it); [ssl] validation without a certificate file is cqlsh's
    own refusal; a cqlshrc that is not there is refused, not replaced by another."""
    rc = _cqlshrc(tmp_path / "tls", f"[connection]\nhostname = {cassandra.host}\nport = {cassandra.port}\n"
                                    "ssl = true\n\n[ssl]\nvalidate = false\n")
    with pytest.raises(cqlsh_ext.Error) as plain:
        cqlsh_ext.connect(cqlshrc=rc, username=cassandra.username, password=cassandra.password)
    where = f"{cassandra.host}:{cassandra.port}"
    assert str(plain.value).startswith(f"Connection error: {where} does not speak TLS")
    assert "\n" not in str(plain.value) and cassandra.password not in str(plain.value)
    unverified = _cqlshrc(tmp_path / "validate", "[connection]\nssl = true\n")
    cqlsh_s = r"^Validation is enabled; SSL transport factory requires a valid certfile to be specified\. " \
        r".* or set SSL_CERTFILE environment variable\.$"
    with pytest.raises(cqlsh_ext.Error, match=cqlsh_s):
        cqlsh_ext.connect(cqlshrc=unverified)
    missing = tmp_path / "nowhere" / "cqlshrc"
    with pytest.raises(cqlsh_ext.Error, match=rf"^cqlshrc file {re.escape(str(missing))}: no such file$"):
        cqlsh_ext.connect(cassandra.host, cassandra.port, cqlshrc=missing)


def test_close_ends_the_drivers_event_loop_thread_unless_another_cluster_uses_it(cassandra, orders: Orders,
                                                                                tmp_path: Path):
    """db.close() leaves no thread of the driver's behind (its event loop outlived close), run in a
    program of its own (this process's other connections share the loop); while a cluster of the
    program's own is connected, the loop stays and that cluster reads on; a connection after close
    starts a new one."""
    from shell_runner import api

    proc = api(cassandra, tmp_path, "import threading\n"
               "from cassandra.auth import PlainTextAuthProvider\n"
               "from cassandra.cluster import Cluster\n"
               "list(db.query(f'SELECT pk FROM {argv[0]} LIMIT 1'))\n"
               "own = Cluster([host], port=int(port), auth_provider=PlainTextAuthProvider(user, password))\n"
               "session = own.connect()\n"
               "db.close()\n"
               "print(sorted(t.name for t in threading.enumerate()))\n"
               "print(session.execute(f'SELECT count(*) FROM {argv[0]}').one()[0])\n"
               "own.shutdown()\n"
               "again = cqlsh_ext.connect(host, int(port), username=user, password=password)\n"
               "print(len(list(again.query(f'SELECT pk FROM {argv[0]} LIMIT 2'))))\n"
               "again.close()\n"
               "print(sorted(t.name for t in threading.enumerate()))\n", orders.name)
    assert proc.returncode == 0, proc.stderr
    shared, counted, read, after = proc.stdout.splitlines()
    assert "event_loop" in shared and int(counted) == COUNT and read == "2"
    assert after == "['MainThread']", after
