"""A warm session's one connection (agent.session_server): the driver's Cluster and Session that
the session's first shell opened, lent to the shell of every later call in place of a new login
(against Amazon Keyspaces a TLS handshake and a SigV4 exchange each time).

cqlsh's Shell takes a connection it is handed (`use_conn`) but still asks it for a session of its
own (`use_conn.connect(keyspace)`: new pools, new connections); the kept Cluster answers that with
the kept Session (upstream.seams.lend_session). What a call changes on the session is set again by
every Shell it makes (timeout, row factory, consistency, trace wait) or put back when it ends
(`after_call`): a keyspace chosen by USE, a cluster of LOGIN's, a session SOURCE opened in another
keyspace.

`KEPT` is the process's one, set by the session (`hold()`) and read by the shell
(cqlsh_ext.shell.ext_shell.ExtShell: `lend`, `keep`, `opened`); outside a session every function here does
nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class KeptConnection:
    """The Cluster and Session kept, the keyspace they started in, and what a call opened beside
    them (closed when it ends)."""

    def __init__(self) -> None:
        self.cluster: Any = None
        self.session: Any = None
        self.keyspace: str | None = None
        self._opened: list[Any] = []
        self._unlend: Callable[[], None] | None = None

    def lend(self, kwargs: dict[str, Any]) -> None:
        """Before a shell connects (cqlsh's keyword arguments to Shell): the kept connection, once
        there is one."""
        if self.cluster is not None and kwargs.get("use_conn") is None:
            kwargs["use_conn"] = self.cluster

    def keep(self, cluster: Any, session: Any) -> bool:
        """Once a shell connected: the first one's connection is kept. True: it is this one (its
        shell must never close it)."""
        from cqlsh_ext.upstream import seams

        if self.cluster is not None:
            return False
        self.cluster, self.session = cluster, session
        self.keyspace = session.keyspace
        self._unlend = seams.lend_session(self.cluster, self._session_for)
        return True

    def opened(self, cluster: Any) -> None:
        """A cluster a call's shell made beside the kept one (LOGIN's): closed when the call ends, as
        a cold run's end closes it."""
        if self.cluster is not None and cluster is not self.cluster:
            self._opened.append(cluster)

    def _session_for(self, keyspace: str | None) -> Any:
        """What the kept cluster's connect(keyspace) answers: the kept session where it is in that
        keyspace, else a session of its own, as a cold run's (closed when the call ends)."""
        if keyspace == self.session.keyspace:
            return self.session
        session = type(self.cluster).connect(self.cluster, keyspace)
        self._opened.append(session)
        return session

    def after_call(self) -> list[str]:
        """The kept session as the next call expects it: what the call opened closed, the keyspace
        it started in set again (a session that started in none is opened anew: CQL cannot leave a
        keyspace). What failed, one line each (the next call then opens its own session)."""
        failed = []
        while self._opened:
            try:
                self._opened.pop().shutdown()
            except Exception as err:  # already closed, say: nothing left to close
                failed.append(f"closing a call's own connection: {err}")
        if self.session is None or self.session.keyspace == self.keyspace:
            return failed
        try:
            if self.keyspace is not None:
                self.session.set_keyspace(self.keyspace)
            else:
                used, self.session = self.session, type(self.cluster).connect(self.cluster)
                used.shutdown()
        except Exception as err:  # the server gone, say: the next call's shell reports it
            failed.append(f"setting the session's keyspace back: {err}")
        return failed

    def close(self) -> None:
        """At the session's end: the connection closed."""
        self.after_call()
        if self._unlend is not None:
            self._unlend()
        if self.cluster is not None:
            self.cluster.shutdown()
        self.cluster = self.session = None


#: The warm session's connection, while this process is one (hold()); None: every call is a cold run.
KEPT: KeptConnection | None = None


def hold() -> KeptConnection:
    """This process keeps its connection from now on (agent.session_server)."""
    global KEPT
    KEPT = KeptConnection()
    return KEPT


def lend(kwargs: dict[str, Any]) -> None:
    if KEPT is not None:
        KEPT.lend(kwargs)


def keep(cluster: Any, session: Any) -> bool:
    return KEPT is not None and KEPT.keep(cluster, session)


def opened(cluster: Any) -> None:
    if KEPT is not None:
        KEPT.opened(cluster)
