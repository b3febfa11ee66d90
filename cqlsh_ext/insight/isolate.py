"""One call in a forked worker process under an address-space limit (RLIMIT_AS).

The codec modules check every size a header declares before a native library allocates
(docs/formats.md, "Hostile values"), and that is the display's only defence: it cannot afford a
process per value. Two decoders reserve memory that no header check here can bound without
refusing valid values:

- one reserves the dictionary a stream's filter properties name (up to 1 GiB: an 80-byte value
  can ask for 768 MiB);
- one has no header at all, and its output limit is block-granular.

Their containers declare it (the NeedsWorker capability, codecs.capabilities). INSPECT, offline `cqlsh-ext
inspect` and ADVISE's sample look at few values and can afford a fork (a few milliseconds) for
those: `needs_worker` here says which, `call` runs the work in a child
whose address space may grow WORKER_MEMORY beyond the parent's, and turns a child that failed an
allocation, died (a Rust library aborts on a failed allocation) or answered nothing into one line.
"""

from __future__ import annotations

import faulthandler
import functools
import os
import pickle
import resource
import signal
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from cqlsh_ext.common.memory import address_space

if TYPE_CHECKING:
    from cqlsh_ext.codecs.base import Container

#: Address space a worker may take beyond its parent's at the fork (bytes).
WORKER_MEMORY = 512 << 20

def needs_worker(value: bytes, mode: str) -> bool:
    """Whether decoding `value` under `mode` calls, at its outer layer, a library whose container
    needs a worker (the NeedsWorker capability, codecs.capabilities)."""
    if mode != "auto":
        return _named_needs_worker(mode)
    return any(fmt.matches(value) for fmt in _auto_formats_needing_a_worker())


@functools.cache
def _named_needs_worker(mode: str) -> bool:
    """Whether one of the formats `-d mode` tries needs a worker (False for an unknown name)."""
    from cqlsh_ext.codecs import registry
    from cqlsh_ext.codecs.capabilities import NeedsWorker

    try:
        return any(isinstance(fmt, NeedsWorker) for fmt in registry.containers_for(mode))
    except ValueError:
        return False


@functools.cache
def _auto_formats_needing_a_worker() -> tuple[Container, ...]:
    """The formats auto-detection can reach (a signature, a trial or an early look) whose codec
    needs a worker; their cheap first check decides (.lzma has no signature, so
    detect(signatures_only=True) would miss it)."""
    from cqlsh_ext.codecs import registry
    from cqlsh_ext.codecs.capabilities import NeedsWorker

    return tuple(
        fmt for fmt in registry.all_containers()
        if isinstance(fmt, NeedsWorker)
        and (fmt.signature_priority, fmt.trial_priority, fmt.early_priority) != (None, None, None))




def call(fn: Callable[..., Any], *args: Any, limit: int = WORKER_MEMORY) -> tuple[bool, Any]:
    """(True, fn(*args)) computed in a forked child limited to `limit` bytes of address space
    beyond this process', or (False, a one-line reason) when it raised, ran out of memory or
    died. The result travels back pickled."""
    base = address_space()
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 0
        try:
            os.close(read_fd)
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides on Ctrl-C
            # A dying worker's last words (Rust's "memory allocation of N bytes failed", a
            # faulthandler dump) would print under the report: the parent says it in one line.
            faulthandler.disable()
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 2)
            if base:
                soft, hard = resource.getrlimit(resource.RLIMIT_AS)
                want = base + limit
                if soft != resource.RLIM_INFINITY:  # never looser than a limit the shell runs under
                    want = min(want, soft)
                resource.setrlimit(resource.RLIMIT_AS, (want, hard))
            try:
                answer: tuple[bool, Any] = (True, fn(*args))
            except BaseException as err:  # noqa: BLE001 - the child reports whatever happened
                from cqlsh_ext.codecs._common import reason

                answer = (False, reason(err))
            data = pickle.dumps(answer, pickle.HIGHEST_PROTOCOL)
            view = memoryview(data)
            while view:
                view = view[os.write(write_fd, view) :]
        except BaseException:  # noqa: BLE001 - nothing may unwind into the parent's code
            code = 1
        finally:
            os._exit(code)
    os.close(write_fd)
    chunks: list[bytes] = []
    try:
        while True:
            chunk = os.read(read_fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    except BaseException:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        raise
    finally:
        os.close(read_fd)
    _pid, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = str(sig)
        return False, f"the decoder's worker process died ({name}; over its {limit >> 20} MiB memory limit?)"
    data = b"".join(chunks)
    if not data:
        return False, "the decoder's worker process ended without an answer"
    try:
        ok, result = pickle.loads(data)
    except Exception:
        return False, "the decoder's worker process ended without an answer"
    return bool(ok), result
