"""This process kept from the user's other processes (Linux): not dumpable, so that no process of
the same user without CAP_SYS_PTRACE reads its /proc entries (environ, mem, io, fd), attaches a
debugger to it, or finds its memory in a core file. An outside piece (a plugin's worker, an
external decoder: docs/payloads.md) runs as the user, so without this it could read the shell's or
the MCP server's environment from /proc/<pid>/environ: CQLSH_EXT_MCP_TOKEN, AWS_SECRET_ACCESS_KEY.

The process still reads its own /proc/self/status, stat, maps and fd; what it starts is dumpable
again after its exec (a plugin's worker, a command: their environment holds no secret). Elsewhere
this does nothing."""

from __future__ import annotations

import sys

#: prctl(2)'s option (linux/prctl.h).
PR_SET_DUMPABLE = 4


def make_private() -> bool:
    """prctl(PR_SET_DUMPABLE, 0) on Linux; whether it was done."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0)
    except (OSError, AttributeError):  # no C library to find, or no prctl in it
        return False
