"""Types of the native core's Python module, cqlsh_ext_native (native/bindings; the decoding is
the core crate's, native/core). Every request and answer crosses as a named type below: a
request is built by keyword, an answer read by attribute. cqlsh_ext/payload/native.py is the
adapter and describes each answer; mypy checks the adapter's and the readers' calls against
these (pyproject.toml's mypy_path) and the stub against the adapter's Core protocol."""

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TypedDict, overload

__version__: str
MIRROR_MANIFEST: str
#: The release of the zlib the core found in the process (core/src/libz.rs), None without one.
ZLIB_VERSION: str | None
LZ4_VERSION: int
ZSTD_VERSION: int
#: The engine's kind codes' names (the last, "handed_back": left to the Python engine).
KINDS: tuple[str, str, str, str, str, str]
FLOAT_SUM_SHIFT: int

Step = str | int
Path = tuple[Step, ...]

# ------------------------------------------------------------------ configuration

class StatsRegistry(TypedDict):
    #: (the magic's first byte, the container's label, the stored size from which it is sized
    #: from its header)
    header_sized: list[tuple[int, str, int]]
    stream_leads: list[int]
    peek: int
    statuses: list[str]
    reasons: list[str]

class Registry(TypedDict):
    """What the Python registry holds as data (payload/native.py `_config`)."""

    grades: dict[str, str]
    dispatch: list[list[str]]
    early: list[str]
    trial: list[str]
    trial_zero: list[str]
    min_auto_length: int
    trial_min_cap: int
    walk_depth: int
    min_text_length: int
    short_text: int
    min_structured_length: int
    default_cap: int
    max_nodes: int
    min_nodes: int
    tree_depth: int
    msgpack_min_length: int
    stream_magics: list[bytes]
    records: list[str]
    lz4block_checksums: bool
    zlib_version: str
    lz4_version: int
    zstd_version: int
    printable_bmp: bytes
    stats: StatsRegistry

class Configured:
    """Whether the core took the registry, which C libraries are the Python side's releases
    (their formats' values are handed back otherwise), what it reads and what it hands back."""

    configured: bool
    zlib: bool
    lz4: bool
    zstd: bool
    #: The containers and record formats whose values the core reads.
    reads: list[str]
    #: Those whose values it hands back to the Python engine (recognised and left, or lacked).
    hands_back: list[str]
    #: Those the registry names that the core does not know (a value reaching one is handed back).
    lacked: list[str]

def configure(registry: Registry) -> Configured: ...
def configured() -> Configured: ...
def known_containers() -> list[tuple[str, str]]: ...
def panics() -> int: ...

# ------------------------------------------------------------------ the engine's page read

class DecodeRequest:
    values: Sequence[Any]
    cap: int
    def __init__(self, values: Sequence[Any], *, cap: int, paths: Sequence[Path] | None = None,
                 text: bool = False, trees: bool = False, missing: Any = None, measure: bool = False,
                 text_limit: int = 0, json: bool = True) -> None: ...

class PathMiss:
    depth: int
    key: Step
    keys: tuple[str, ...]

class PathColumn:
    values: list[Any]
    found: bool
    miss: PathMiss | None

class DecodedPage:
    kinds: bytes
    labels: list[str]
    stored: list[int]
    decoded: list[int]
    cut: bytes
    texts: list[str | None] | None
    #: With texts: 1 where a text is clean (no control character), else 0.
    clean: bytes | None
    trees: list[Any] | None
    paths: list[PathColumn]
    handed_back: list[int]
    #: Values handed back with their containers peeled, by index: (chain, sizes, payload).
    peeled: dict[int, tuple[tuple[str, ...], tuple[int, ...], bytes]]

def decode_page(request: DecodeRequest) -> DecodedPage: ...

# ------------------------------------------------------------------ a page's columns (Arrow)

class Column(Sequence[Any]):
    """One column of a page: an Arrow array through the C data interface, and a sequence of
    the Python values pyarrow's to_pylist() would give."""

    name: str
    #: The Arrow type's format string ("u" utf8, "l" int64, "g" float64, "b" bool, "z" binary,
    #: "n" null, "+ud:..." a dense union).
    format: str
    def __arrow_c_array__(self, requested_schema: object | None = None) -> tuple[object, object]: ...
    def __len__(self) -> int: ...
    @overload
    def __getitem__(self, index: int) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Any]: ...
    def to_pylist(self) -> list[Any]: ...

class PageColumns(Mapping[str, Column]):
    """A page's answer as named columns: kind, label, stored, decoded, cut, text (when asked) and
    one per path (no reader of the package asks for it; tests/native/test_stdlib_spellings pins its
    JSON text); one Arrow record batch (`__arrow_c_array__`, a struct array; `__arrow_c_stream__`)."""

    handed_back: list[int]
    #: Values handed back with their containers peeled, by index: (chain, sizes, payload).
    peeled: dict[int, tuple[tuple[str, ...], tuple[int, ...], bytes]]
    num_rows: int
    def fill(self, index: int, *, kind: str, label: str, decoded: int, cut: bool, text: str | None,
             values: list[Any]) -> None: ...
    def keys(self) -> list[str]: ...  # type: ignore[override]
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[str]: ...
    def __getitem__(self, name: str) -> Column: ...
    def to_pydict(self) -> dict[str, list[Any]]: ...
    def __arrow_c_array__(self, requested_schema: object | None = None) -> tuple[object, object]: ...
    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object: ...

def page_columns(request: DecodeRequest, names: list[str]) -> PageColumns: ...

# ------------------------------------------------------------------ a file's held values

#: A kind of render/arrow_types.py as the core lays it out: ("null",), ("bool",), ("int", bits),
#: ("float",), ("dec", scale, digits), ("str",), ("json",), ("list", kind), ("struct", ((name,
#: kind), ...)).
KindSpec = tuple[Any, ...]

class HeldArray:
    """An Arrow array the core laid out (pyarrow.array(it))."""

    format: str
    def __len__(self) -> int: ...
    def __arrow_c_array__(self, requested_schema: object | None = None) -> tuple[object, object]: ...

class HeldColumn(Sequence[Any]):
    """A path's values in a page's kept rows, held by the core: a sequence of the Python values the
    query gives; slices are HeldColumns."""

    #: Every row the core's: held_array lays the column out.
    pure: bool
    def __len__(self) -> int: ...
    @overload
    def __getitem__(self, index: int) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> HeldColumn: ...
    def python_rows(self) -> list[int]: ...
    def shapes(self, limit: int, bounds: tuple[int, int, int]) -> list[tuple[int, Any, int]]: ...
    def to_pylist(self, limit: int | None = None) -> list[Any]: ...
    def rearranged(self, order: list[int], python: list[Any]) -> HeldColumn: ...

class HeldContents(Sequence[Any]):
    """A blob column's rows read by the core (kind, label, payload): a sequence of the rows' stored
    values; slices are HeldContents."""

    pure: bool
    def __len__(self) -> int: ...
    @overload
    def __getitem__(self, index: int) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> HeldContents: ...
    def python_rows(self) -> list[int]: ...
    #: The rows handed back with their containers peeled, by index: (chain, sizes, payload).
    def peeled(self) -> dict[int, tuple[tuple[str, ...], tuple[int, ...], bytes]]: ...
    def shapes(self, limit: int, bounds: tuple[int, int, int]) -> list[tuple[int, Any, int]]: ...
    def stored(self) -> list[Any]: ...
    def sizes(self) -> list[int]: ...
    def kinds(self) -> tuple[list[str | None], list[int]]: ...
    def decoded_sizes(self) -> list[int]: ...
    def parts(self, limit: int | None = None) -> tuple[list[str | None], list[str | None], list[Any], list[int]]: ...
    def texts(self, json: bool) -> tuple[list[str | None], list[str | None], list[str | None], list[int]]: ...
    def rearranged(self, order: list[int], python: list[Any]) -> HeldContents: ...

def held_array(chunks: Sequence[HeldColumn], kind: KindSpec, name: str,
               filled: dict[int, Any] | None = None) -> tuple[HeldArray | None, list[tuple[int, Any]]]: ...
def contents_arrays(chunks: Sequence[HeldContents], kind: KindSpec, name: str, raw: bool,
                    confidence: Callable[[str | None, str], str | None],
                    filled: dict[int, tuple[Any, ...]] | None = None
                    ) -> tuple[list[HeldArray] | None, list[tuple[int, Any]]]: ...
def hold_page(values: Sequence[Any], cap: int, text_trees: bool = True,
              text_gaps: bool = False) -> HeldContents: ...
def json_lines(layout: list[Any], rows: int, cut: tuple[int, int] | None = None) -> bytes: ...
def answer_rows(layout: list[Any], rows: int,
                cut: tuple[int, int]) -> tuple[list[bytes | None], list[int]]: ...
def json_text_escaped(text: bytes) -> bytes: ...

# ------------------------------------------------------------------ COMPRESSION STATS

class RowsPage:
    """A RESULT page's rows section as the server sent it: `rows` rows of `columns` cells in
    `body[start:]` (`body` may be the whole message, not copied)."""
    body: bytes
    rows: int
    columns: int
    start: int
    def __init__(self, body: bytes, rows: int, columns: int, start: int = 0) -> None: ...

def split_page(page: RowsPage, wanted: list[int], rows: list[int] | None = None) -> list[list[bytes | None]]: ...

def select_rows(page: RowsPage, wanted: list[int], rows: list[int] | None = None) -> bytes: ...

def cql_columns(page: RowsPage, wanted: list[int], kinds: list[str],
                rows: list[int] | None = None) -> list[list[Any] | None]: ...
class ArrowBinary:
    """A pyarrow binary or large_binary array whose cells the core borrows from its buffers (a
    place's source in measure_page, query_page and describe_page, as a RowsPage column is);
    ValueError (one line) for another type or buffers that do not hold its cells."""
    array: Any
    def __init__(self, array: Any) -> None: ...
    def __len__(self) -> int: ...

def arrow_cells() -> int:
    """Cells the three calls have read from ArrowBinary sources since the module loaded."""

def cql_array(values: list[Any], format: str, name: str) -> HeldArray | None: ...

class MeasurePlace:
    def __init__(self, source: Sequence[Any] | RowsPage | ArrowBinary, *, column: int | None = None, rows: list[int] | None = None,
                 text: bool = False, exact_ratios: bool = False) -> None: ...

class MeasureRequest:
    rows: int
    places: list[MeasurePlace]
    cap: int
    def __init__(self, *, rows: int, places: list[MeasurePlace], cap: int, from_headers: bool,
                 bucket_bounds: list[int], size_bounds: list[int], median_inv_step: float, median_zero: int,
                 write_unit: int, read_unit: int, row_quota: int, near_share: float) -> None: ...

class ChainCount:
    status: str
    chain: str
    values: int
    stored: int
    size: int

class Units:
    rows: int
    wcu: int
    rcu: int
    near_quota: int
    over_quota: int
    largest: int

class PartialRow:
    row: int
    before: int
    after: int

class MeasuredColumn:
    values: int
    nulls: int
    stored: int
    size: int
    inexact: int
    from_headers: int
    chains: list[ChainCount]
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
    before: Units
    after: Units
    rows_left: list[PartialRow]

def measure_page(request: MeasureRequest) -> MeasuredPage: ...

# ------------------------------------------------------------------ payload queries

class Literal:
    @staticmethod
    def text(value: str) -> Literal: ...
    @staticmethod
    def integer(value: int) -> Literal: ...
    @staticmethod
    def decimal(*, nearest: float, floor: int, ceil: int, integral: bool) -> Literal: ...
    @staticmethod
    def boolean(value: bool) -> Literal: ...
    @staticmethod
    def null() -> Literal: ...

class Needle:
    any: bool
    strings: list[str]
    def __init__(self, *, any: bool, strings: list[str]) -> None: ...

class QueryPlace:
    def __init__(self, source: Sequence[Any] | RowsPage | ArrowBinary, *, column: int | None = None, paths: Sequence[Path],
                 needles: list[Needle] = ...) -> None: ...

class Condition:
    def __init__(self, *, op: str, place: int, path: int | None = None, literals: list[Literal] = ...) -> None: ...

class Aggregate:
    def __init__(self, *, func: str, star: bool, input: tuple[int, int] | None = None) -> None: ...

class QueryRequest:
    rows: int
    places: list[QueryPlace]
    def __init__(self, *, rows: int, places: list[QueryPlace], conditions: list[Condition],
                 outputs: list[tuple[int, int] | None], order: list[tuple[int, int] | None],
                 keys: list[tuple[int, int]], aggregates: list[Aggregate], grouped: bool, cap: int,
                 undecodable_group: Any, held: bool = False, contents: list[int] = ...,
                 text_trees: bool = True, text_gaps: bool = False) -> None: ...

class AccumulatorState:
    count: int
    int_sum: int
    float_sum: bytes | None
    floats: bool
    num_min: int | float | None
    num_max: int | float | None
    str_min: str | None
    str_max: str | None
    skipped: int

class GroupPartial:
    key: tuple[Any, ...]
    accumulators: list[AccumulatorState]

class PathSeen:
    found: bool
    miss: tuple[int, list[str]] | None

class QueryPage:
    kept: list[int]
    handed_rows: list[int]
    outputs: list[list[Any]]
    order: list[list[Any]]
    undecodable: int
    cut: int
    kinds: list[tuple[int, int]]
    paths: list[list[PathSeen]]
    groups: list[GroupPartial]
    overflow: bool
    #: With `held`: per projected item, its path's values held by the core (None: not a path).
    held: list[HeldColumn | None]
    #: Per place of `contents`, its kept rows' contents.
    contents: list[HeldContents]
    #: Per place, its values handed back with their containers peeled: (stored, chain, sizes, payload).
    peeled: list[list[tuple[bytes, tuple[str, ...], tuple[int, ...], bytes]]]

def query_page(request: QueryRequest) -> QueryPage: ...

# ------------------------------------------------------------------ DESCRIBE PAYLOAD

class DescribeRequest:
    values: Sequence[Any] | RowsPage | ArrowBinary
    column: int | None
    cap: int
    def __init__(self, values: Sequence[Any] | RowsPage | ArrowBinary, *, column: int | None = None, cap: int, max_paths: int, max_visits: int, max_depth: int,
                 exact: int, long_text: int, long_key: int, p: int) -> None: ...

class Encoding:
    kind: int
    label: str
    values: int

class Lengths:
    count: int
    least: int
    most: int
    total: int

class SketchPartial:
    #: (the key as describe.sketch.key makes it, its count), while few
    counts: list[tuple[Any, int]] | None
    registers: bytes | None

class NodePartial:
    present: int
    seen: int
    types: list[tuple[str, int]]
    children: list[tuple[str, NodePartial]]
    items: NodePartial | None
    folded: NodePartial | None
    key_kinds: list[tuple[str, int]]
    keys: SketchPartial | None
    strings: Lengths
    lists: Lengths
    low: int | float | None
    high: int | float | None
    values: SketchPartial | None

class StructurePartial:
    values: int
    untracked: int
    unfinished: int
    too_deep: int
    root: NodePartial

class DescribedPage:
    encodings: list[Encoding]
    handed_back: list[int]
    #: Values handed back with their containers peeled: (stored, chain, sizes, payload).
    peeled: list[tuple[bytes, tuple[str, ...], tuple[int, ...], bytes]]
    nulls: int
    structure: StructurePartial

def describe_page(request: DescribeRequest) -> DescribedPage: ...
