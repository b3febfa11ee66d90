#!/usr/bin/env python3
"""An external decoder for ACME's KV1 records, as a team would write one for cqlsh-ext's
[formats] section: the stored bytes on stdin, JSON on stdout (--encode: the other way).
Misbehaves on request: --hang, --flood, --fail, --not-json; --allocate (1.5 GB), --env (answers
its environment), --leave PIDFILE (starts a `setsid` sleeper, its pid in PIDFILE, and leaves it),
--pids DIR (its own pid, as a file in DIR), --sleep SECONDS (before it answers), --ancestors
(answers, for each process above it, its command line and the names of its environment's
variables as /proc/PID/environ gives them to this process, or why it could not read them)."""

import json
import os
import struct
import subprocess
import sys
import time

MAGIC = b"KV1\x00"


def decode(data: bytes) -> dict:
    if not data.startswith(MAGIC):
        sys.exit("decode_kv: no KV1 magic")
    out, at = {}, len(MAGIC)
    while at < len(data):
        (klen,) = struct.unpack_from(">H", data, at)
        key = data[at + 2 : at + 2 + klen].decode()
        at += 2 + klen
        (vlen,) = struct.unpack_from(">I", data, at)
        out[key] = data[at + 4 : at + 4 + vlen].decode()
        at += 4 + vlen
    return out


def encode(record: dict) -> bytes:
    out = bytearray(MAGIC)
    for key, value in record.items():
        k, v = key.encode(), value.encode()
        out += struct.pack(">H", len(k)) + k + struct.pack(">I", len(v)) + v
    return bytes(out)


def option(args: list, name: str) -> str | None:
    return args[args.index(name) + 1] if name in args else None


def leave_a_sleeper(pidfile: str) -> None:
    """A sleeper in a session of its own (setsid), out of the command's process group."""
    subprocess.Popen(["setsid", "sh", "-c", f"echo $$ > {pidfile}.part && mv {pidfile}.part {pidfile} "
                      "&& exec sleep 600"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL)
    while not os.path.exists(pidfile):
        time.sleep(0.01)


def ancestors() -> list:
    """Each process above this one (to the first, or init): its pid, command line, and the names in
    its /proc/PID/environ, or the error reading it gave."""
    found, pid = [], os.getppid()
    while pid > 1 and len(found) < 16:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            seen = {"pid": pid, "cmdline": fh.read().replace(b"\0", b" ").decode(errors="replace")[:300]}
        try:
            with open(f"/proc/{pid}/environ", "rb") as fh:
                seen["names"] = sorted(item.split(b"=", 1)[0].decode(errors="replace")
                                       for item in fh.read().split(b"\0") if item)
        except OSError as err:
            seen["refused"] = err.strerror
        found.append(seen)
        with open(f"/proc/{pid}/stat", "rb") as fh:
            pid = int(fh.read().rsplit(b")", 1)[1].split()[1])
    return found


def main() -> None:
    args = sys.argv[1:]
    data = sys.stdin.buffer.read()
    if option(args, "--pids"):
        open(os.path.join(option(args, "--pids"), str(os.getpid())), "w").close()
    if option(args, "--leave"):
        leave_a_sleeper(option(args, "--leave"))
    if option(args, "--sleep"):
        time.sleep(float(option(args, "--sleep")))
    if "--allocate" in args:
        hoard = bytes(1536 << 20)  # 1.5 GB, calloc: its pages untouched, only the address space counts
        del hoard
    if "--ancestors" in args:
        json.dump({"ancestors": ancestors()}, sys.stdout)
        return
    if "--env" in args:
        json.dump(dict(os.environ), sys.stdout)
        return
    if "--hang" in args:
        time.sleep(3600)
    if "--flood" in args:
        while True:
            sys.stdout.write("x" * 65536)
    if "--fail" in args:
        sys.exit("decode_kv: this value is not ours")
    if "--not-json" in args:
        sys.stdout.write("plain words")
        return
    if "--encode" in args:
        sys.stdout.buffer.write(encode(json.loads(data)))
        return
    json.dump(decode(data), sys.stdout)


if __name__ == "__main__":
    main()
