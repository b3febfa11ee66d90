"""The cost of a full scan, said before it starts: on Amazon Keyspaces (billed per row read) and
above CONFIRM_FROM_BYTES by the server's estimate. A person at a terminal is asked [y/N]; a
script goes ahead only with the statement's CONFIRM. COMPRESSION STATS and payload queries ask
the same way, and COMPRESSION TRIAL before it writes to Amazon Keyspaces (`accepted`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cqlsh_ext.scanning.capacity import Pricing
    from cqlsh_ext.scanning.scan import ScanContext

#: A full scan asks first on Amazon Keyspaces (billed per read) and above this estimated size.
CONFIRM_FROM_BYTES = 1 << 30


def full_scan_accepted(ctx: ScanContext, ks: str, table: str, size: Any, partitioner: str, confirmed: bool,
                       label: str, script_hint: str, question: str) -> bool:
    """Whether to go ahead with a full scan of ks.table; `size` the server's TableSize estimate
    (or None), `confirmed` the statement's CONFIRM; `label` starts the lines, `script_hint` tells
    a script how to go ahead, `question` is asked at a terminal."""
    from cqlsh_ext.scanning.capacity import rcu

    keyspaces = on_keyspaces(ctx, partitioner)
    if not keyspaces and (size is None or size.bytes < CONFIRM_FROM_BYTES):
        return True
    if confirmed:
        return True
    if size is not None:
        priced = pricing(ctx, partitioner)
        units = priced.reads(size.partitions * rcu(size.mean_partition_bytes))
        cost = (f"about {size.partitions:,} partitions, {size.bytes / 1e9:.2f} GB, "
                f"~{units:,.0f} read units at {priced.consistency} (estimate)")
    else:
        cost = "an unknown number of rows (the server gives no size estimate)"
    where = "Amazon Keyspaces bills every row read" if keyspaces else "a large table"
    what = f"{label}: a full scan of {ks}.{table} reads {cost}; {where}."
    return accepted(ctx, what, script_hint, question, f"{label}: not scanned.")


def on_keyspaces(ctx: ScanContext, partitioner: str) -> bool:
    """Amazon Keyspaces (billed per request): its partitioner or host name, or the flags asking for it."""
    from cqlsh_ext.scanning.ring import is_keyspaces

    opts = ctx.keyspaces
    return is_keyspaces(partitioner, ctx.host,
                        opts.keyspaces or opts.wants_sigv4 or opts.stock_sigv4_provider)


def accepted(ctx: ScanContext, what: str, script_hint: str, question: str, refused: str) -> bool:
    """`what` a run costs, said first; then, where someone can answer (`ctx.ask`: a terminal),
    `question` ([y/N]), and `refused` said on a no. Where nobody can (a script: -e, -f, no
    terminal; `cqlsh-ext mcp`), `what` and `script_hint` are the error, one line, and the run
    does not go ahead (the statement's CONFIRM is the caller's to check before)."""
    if ctx.ask is None:
        ctx.error(f"{what} {script_hint}")
        return False
    ctx.say(what)
    if ctx.ask(question):  # on stderr: the pager holds standard output back
        return True
    ctx.say(refused)
    return False


def pricing(ctx: ScanContext, partitioner: str | None = None) -> Pricing:
    """How the shell's reports price capacity units (scanning.capacity.Pricing): reads at the
    session's consistency level, paid in units on Amazon Keyspaces (pricing_for). `partitioner`:
    system.local's, when the caller has read it."""
    from cassandra import ConsistencyLevel

    from cqlsh_ext.scanning.capacity import STRONG_READS

    consistency = ConsistencyLevel.value_to_name.get(ctx.consistency, STRONG_READS)
    return pricing_for(consistency, ctx.keyspaces, ctx.session, ctx.host, partitioner)


def pricing_for(consistency: str, options: Any, session: Any, host: str,
                partitioner: str | None = None) -> Pricing:
    """Reads priced at `consistency` (the level the command's reads use); paid in capacity units
    on Amazon Keyspaces: its options in use (`options`: settings.KeyspacesOptions), its
    partitioner or host name, or a server that reports release 3.x as Keyspaces does; else in
    storage (Apache Cassandra). The shell's reports and Spark's use it alike."""
    from cqlsh_ext.scanning.capacity import Pricing
    from cqlsh_ext.scanning.ring import is_keyspaces, server_partitioner

    if options.active or _major_release(session) == 3:
        return Pricing(consistency, keyspaces=True)
    found = partitioner if partitioner is not None else server_partitioner(session)
    return Pricing(consistency, keyspaces=is_keyspaces(found, host, options.keyspaces or options.wants_sigv4
                                                       or options.stock_sigv4_provider))


def _major_release(session: Any) -> int | None:
    """The major release the server reports (Amazon Keyspaces reports 3.11.2), or None."""
    try:
        hosts = session.cluster.metadata.all_hosts()
    except Exception:
        return None
    for host in hosts:
        release = str(getattr(host, "release_version", "") or "")
        head = release.split(".", 1)[0]
        if head.isdigit():
            return int(head)
    return None
