"""Types of the native core's module (native/src: page.rs, stats.rs, query.rs, describe.rs).
cqlsh_ext/payload/native.py is its adapter and describes each answer; mypy checks the adapter's
calls against these (pyproject.toml's mypy_path) and the stub against the adapter's Core protocol."""

from typing import Any

__version__: str
MIRROR_MANIFEST: str
ZLIB_VERSION: str
LZ4_VERSION: int
ZSTD_VERSION: int
KINDS: tuple[str, str, str, str, str, str]
FLOAT_SUM_SHIFT: int

def configure(config: dict[str, Any]) -> None: ...
def configured() -> tuple[bool, bool, bool, bool]: ...
def known_containers() -> list[tuple[str, str]]: ...
def panics() -> int: ...

class DecodedPage:
    kinds: bytes
    labels: list[str]
    stored: list[int]
    decoded: list[int]
    cut: bytes
    texts: list[str | None] | None
    trees: list[Any] | None
    #: Per path: (values, found, miss).
    paths: list[tuple[list[Any], bool, tuple[int, str | int, tuple[str, ...]] | None]]
    handed_back: list[int]

def decode_page(values: Any, cap: int, paths: list[tuple[str | int, ...]], want_text: bool, want_tree: bool,
                missing: Any, measure: bool = False) -> DecodedPage: ...

class MeasuredColumn:
    values: int
    nulls: int
    stored: int
    size: int
    inexact: int
    from_headers: int
    chains: list[tuple[str, str, int, int, int]]
    reasons: list[tuple[str, int]]
    compressed: tuple[int, int, int]
    buckets_before: list[int]
    buckets_after: list[int]
    sizes_before: list[int]
    sizes_after: list[int]
    ratios: list[float]
    ratio_bins: list[tuple[int, int]]
    handed_back: list[int]

class MeasuredPage:
    columns: list[MeasuredColumn]
    before: tuple[int, int, int, int, int, int]
    after: tuple[int, int, int, int, int, int]
    rows_left: list[tuple[int, int, int]]

def measure_page(rows: int, places: list[tuple[Any, int | None, list[int] | None, bool, bool]], cap: int,
                 from_headers: bool,
                 spec: tuple[list[int], list[int], float, int, tuple[int, int], int, float]) -> MeasuredPage: ...

class QueryPage:
    kept: list[int]
    handed_rows: list[int]
    outputs: list[list[Any]]
    order: list[list[Any]]
    undecodable: int
    cut: int
    kinds: list[tuple[int, int]]
    paths: list[list[tuple[bool, tuple[int, list[str]] | None]]]
    groups: list[tuple[tuple[Any, ...], list[tuple[int, int, bytes | None, bool, Any, Any, str | None, str | None, int]]]]
    overflow: bool

def query_page(rows: int, places: list[tuple[Any, int | None, list[tuple[str | int, ...]], list[tuple[bool, list[str]]]]],
               conditions: list[tuple[str, int, int | None, list[tuple[Any, ...]]]],
               outputs: list[tuple[int, int] | None], order: list[tuple[int, int] | None],
               keys: list[tuple[int, int]], aggregates: list[tuple[str, bool, tuple[int, int] | None]],
               grouped: bool, cap: int, undecodable_group: Any) -> QueryPage: ...

class DescribedPage:
    encodings: list[tuple[int, str, int]]
    handed_back: list[int]
    structure: tuple[Any, ...]

def describe_page(values: Any, cap: int, bounds: tuple[int, int, int, int, int, int, int]) -> DescribedPage: ...
