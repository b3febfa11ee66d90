"""insight.isolate: a native call in a forked worker under an address-space limit. A worker that
fails an allocation, aborts or raises becomes one line; the parent goes on."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from cqlsh_ext.codecs import registry
from cqlsh_ext.insight import isolate
from cqlsh_ext.insight.advise import AdviseSample
from cqlsh_ext.insight.inspect import inspect_value

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "codecs"))

import hostile_values  # noqa: E402


def test_an_answer_comes_back_pickled() -> None:
    assert isolate.call(sorted, [3, 1, 2]) == (True, [1, 2, 3])


def test_an_allocation_over_the_limit_is_a_reason() -> None:
    ok, why = isolate.call(bytearray, 2 << 30, limit=256 << 20)
    assert not ok and why == "out of memory (declared size too large?)"


def test_a_worker_that_aborts_is_a_reason() -> None:
    # what a Rust library (cramjam) does when an allocation fails
    ok, why = isolate.call(os.abort, limit=256 << 20)
    assert not ok and why == "the decoder's worker process died (SIGABRT; over its 256 MiB memory limit?)"


def test_which_values_go_to_a_worker() -> None:
    xz = hostile_values.xz_with_dictionary(35)
    assert isolate.needs_worker(xz, "auto")
    assert isolate.needs_worker(hostile_values.lzma_alone_claiming(100), "auto")
    assert isolate.needs_worker(b"anything", "brotli") and isolate.needs_worker(b"anything", "xz")
    assert not isolate.needs_worker(b"\x1f\x8b\x08" + bytes(20), "auto")
    assert not isolate.needs_worker(xz, "gzip")


def test_an_xz_dictionary_of_768_mib_is_refused_by_inspect_and_advise_not_reserved() -> None:
    # liblzma reserves the dictionary the filter properties name (up to codecs.xz.MEMLIMIT): in
    # the shell's own process that is 768 MiB of address space for an 80-byte value. INSPECT and
    # ADVISE decode it in a worker whose limit (512 MiB beyond the shell's) it exceeds.
    value = hostile_values.xz_with_dictionary(35)
    report = inspect_value(value, {"file": "v"}, "auto", 1 << 20)
    assert report.render()[1] == "  failed: stored 80 B (xz: out of memory (declared size too large?))"
    sample = AdviseSample(10, "auto", 1 << 20)
    sample.add("c", value)
    assert sample.columns["c"][3] == {"undecodable: a format that failed": 1}
    # the same stream with a 1 MiB dictionary decodes through the worker as it does in-process
    good = hostile_values.xz_with_dictionary(16)
    assert inspect_value(good, {"file": "v"}).chain == ("xz",)
    assert registry.decode_auto(good)[1].data == b"hello world" * 10
