"""ACME's KV1 records, read and written by cqlsh-ext through its plugin door.

A KV1 value is the magic b"KV1\\x00", then entries: a u16 (big endian) key length, the key (UTF-8),
a u32 value length, the value (UTF-8); nothing after the last. It reads as {key: value}.

HOSTILE is a reader that misbehaves on purpose, by what the value says (the tests' plugin that
the shell must hold within the value's budget and apart from its answers): b"sleep", b"nodes",
b"deep", b"memory", b"object", b"raise", b"print"; b"noisy NAME" writes to fd 1, prints and
starts `cat` and `sh -c 'echo forged'`, and answers {"row": NAME}; b"forge" writes into the pipe
its answers go on; b"env" answers its environment, b"path" its sys.path.
"""

from __future__ import annotations

import marshal
import os
import struct
import subprocess
import sys
import time
from typing import Any

from cqlsh_ext.payload.formats import PayloadError, PayloadFormat

MAGIC = b"KV1\x00"


def decode(data: bytes) -> dict[str, str]:
    if not data.startswith(MAGIC):
        raise PayloadError("no KV1 magic")
    out: dict[str, str] = {}
    at = len(MAGIC)
    while at < len(data):
        if at + 2 > len(data):
            raise PayloadError(f"a key length cut at byte {at}")
        (klen,) = struct.unpack_from(">H", data, at)
        at += 2
        key = data[at : at + klen]
        at += klen
        if at + 4 > len(data) or len(key) != klen:
            raise PayloadError(f"an entry cut at byte {at}")
        (vlen,) = struct.unpack_from(">I", data, at)
        at += 4
        value = data[at : at + vlen]
        if len(value) != vlen:
            raise PayloadError(f"a value declares {vlen} bytes, {len(value)} are left")
        at += vlen
        out[key.decode("utf-8")] = value.decode("utf-8")
    return out


def encode(record: Any) -> bytes:
    if not isinstance(record, dict) or not all(isinstance(v, str) for v in record.values()):
        raise PayloadError("KV1 holds an object of strings")
    out = bytearray(MAGIC)
    for key, value in record.items():
        k, v = str(key).encode("utf-8"), value.encode("utf-8")
        out += struct.pack(">H", len(k)) + k + struct.pack(">I", len(v)) + v
    return bytes(out)


KV1 = PayloadFormat("kv1", True, lambda data: data.startswith(MAGIC), decode, encode=encode,
                    leads=MAGIC[:1], confidence="likely",
                    confidence_why="the KV1 magic and every entry read to the end")


def hostile(data: bytes) -> Any:
    if data == b"sleep":
        time.sleep(3600)
    if data == b"nodes":
        return list(range(5_000_000))
    if data == b"deep":
        tree: Any = []
        for _ in range(5000):
            tree = [tree]
        return tree
    if data == b"memory":
        hoard = [bytes(64 << 20) for _ in range(64)]  # 4 GiB of address space (calloc: pages untouched)
        return len(hoard)
    if data == b"object":
        return object()
    if data == b"raise":
        raise RuntimeError("the plugin fell over")
    if data == b"print":
        print("a plugin that prints")
        sys.stdout.write("on stdout\n")
        return {"printed": True}
    if data.startswith(b"noisy "):
        return noisy(data[6:].decode())
    if data == b"forge":
        os.write(_answers_pipe(), b"a forged answer, out of turn\n")
        return {"forged": False}
    if data == b"env":
        return dict(os.environ)
    if data == b"path":
        return list(sys.path)
    return {"bytes": len(data)}


def noisy(name: str) -> dict[str, str]:
    """What a careless plugin does while it decodes: writes on fd 1 (an answer as the worker's first
    protocol framed one, were fd 1 its pipe), prints, runs `cat` (reading whatever its fd 0 is) and
    leaves `sh` echoing behind it."""
    forged = marshal.dumps(("ok", {"row": "forged"}))
    os.write(1, struct.pack("<I", len(forged)) + forged)
    print(f"decoding {name}")
    subprocess.run(["cat"], timeout=30, check=False)
    subprocess.Popen(["sh", "-c", "echo forged; echo forged >&2"])
    return {"row": name}


def _answers_pipe() -> int:
    """The descriptor of a pipe this process writes (the worker's answers)."""
    for fd in map(int, os.listdir("/proc/self/fd")):
        try:
            pipe = os.readlink(f"/proc/self/fd/{fd}").startswith("pipe:")
            with open(f"/proc/self/fdinfo/{fd}") as info:
                flags = int(next(line for line in info if line.startswith("flags:")).split()[1], 8)
        except (OSError, StopIteration):
            continue
        if pipe and flags & os.O_ACCMODE == os.O_WRONLY:
            return fd
    raise PayloadError("no pipe to write into")


HOSTILE = PayloadFormat("acme_hostile", False, lambda data: True, hostile)
