"""A page read for a statement (payload.engine's read_page): what is asked of each value of a
page (ReadRequest: the paths, the texts, the views, the needles) and the answer (PageRead: per
value its kind and cut, per path a column of values, what was found and missed), with the helpers
both roads build it with: the Python engine (payload.engine) and the native core's adapter
(payload.native), which give the same PageRead, value for value (tests/native)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, overload

from cqlsh_ext.payload.formats.tree import Cut
from cqlsh_ext.payload.json_text import json_container
from cqlsh_ext.payload.paths import CUT, MISSING, Steps, keys_of, read_path
from cqlsh_ext.payload.view import RECORD, TEXT, BlobView


class ReadRequest:
    """What read_page() reads of each value of a page (made once per statement and column)."""

    __slots__ = ("known", "needles", "paths", "text", "views")

    def __init__(self, paths: Sequence[Steps] = (), text: bool = False, views: bool = False,
                 needles: Sequence[Callable[[str], bool] | None] = ()) -> None:
        #: The paths a statement reads inside the payload (steps: keys and list indexes).
        self.paths = tuple(paths)
        #: Each value's text too (a TEXT value's text; LIKE on the bare column).
        self.text = text
        #: Each value's full view too (a statement that outputs the blob itself: decoded once).
        self.views = views
        #: Per path, a test of a JSON text that is True when a condition on that path certainly
        #: fails on it (no string the condition asks for is in the text): such a value is
        #: rejected without parsing its JSON, once some value of the column had the path (until
        #: then, a value read notes where the path stopped, for the closing line's hint).
        self.needles = tuple(needles) or (None,) * len(self.paths)
        #: The indexes of the paths some value had (kept from page to page).
        self.known: set[int] = set()


class PageRead:
    """read_page()'s answer: per value, its kind and whether the cap cut it; per path, a column of
    values (MISSING where a readable value lacks the path, None where the value cannot be read:
    undecodable, cut or rejected), whether any value had it and where the walks stopped furthest
    in; the texts and the views when asked."""

    __slots__ = ("columns", "cut", "found", "kinds", "missed", "rejected", "texts", "trees", "views")

    def __init__(self, n: int, paths: int) -> None:
        self.kinds: list[str] = []
        self.cut: list[bool] = []
        #: Values a needle test rejected: their paths were not read (they match no condition).
        self.rejected: list[bool] = [False] * n
        self.columns: list[list[Any]] = [[] for _ in range(paths)]
        self.found: list[bool] = [False] * paths
        #: Per path: (the step it stopped at, the key wanted there, the string keys seen there).
        self.missed: list[tuple[int, str | int, set[str]] | None] = [None] * paths
        self.texts: list[str | None] = []
        #: What each value's paths were read in: a record's tree, a text's JSON (None: a text that
        #: is no JSON object or array, or a value that cannot be read). On the native road, made
        #: on first reading of an item (Lazy).
        self.trees: Sequence[Any] = []
        #: ReadRequest.views: each value's view (on the native road, made by the Python engine on first
        #: reading of an item: Lazy).
        self.views: Sequence[BlobView] = []


_UNMADE: Any = object()


class Lazy(Sequence[Any]):
    """A column of a page whose items are made on first reading (the native road's trees and
    views): reads like the list the Python engine's road gives."""

    __slots__ = ("_items", "_make")

    def __init__(self, n: int, make: Callable[[int], Any]) -> None:
        self._items: list[Any] = [_UNMADE] * n
        self._make = make

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, i: int) -> Any: ...

    @overload
    def __getitem__(self, i: slice) -> list[Any]: ...

    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self._items)))]
        item = self._items[i]
        if item is _UNMADE:
            at = i + len(self._items) if i < 0 else i
            item = self._items[i] = self._make(at)
        return item

    def __iter__(self) -> Iterator[Any]:
        return (self[i] for i in range(len(self._items)))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, Lazy)):
            return list(self) == list(other)
        return NotImplemented

    def __repr__(self) -> str:
        made = sum(item is not _UNMADE for item in self._items)
        return f"Lazy({len(self._items)} items, {made} made)"


def tree_of(kind: str, found: Any, paths: Sequence[Steps], views: bool) -> Any:
    """What PageRead.trees keeps for a readable value (`found`: its text or record)."""
    if not paths and (views or kind == TEXT):
        return None
    return json_container(found) if kind == TEXT else found


def read_view(page: PageRead, request: ReadRequest, view: BlobView) -> None:
    """One value's answer from its full view (ReadRequest.views)."""
    kind = view.kind
    page.kinds.append(kind)
    page.cut.append(view.cut)
    trees = page.trees
    assert isinstance(trees, list)
    if request.text:
        page.texts.append(view.text if kind == TEXT else None)
    if view.cut or (kind != TEXT and kind != RECORD):
        trees.append(None)
        for column in page.columns:
            column.append(None)
        return
    tree = view.tree if request.paths else None  # a text's JSON is parsed here once, kept on the view
    trees.append(tree)
    if kind == TEXT and tree is None and any(request.paths) and json_cut(page, view.json_past_budget):
        return
    read_paths(page, request, tree, view.text if kind == TEXT else None)


def json_cut(page: PageRead, reason: str | None) -> bool:
    """Whether the TEXT value just added to `page`, whose text is no JSON container and in which a
    path is read, is JSON past the value's budget (`reason`: json_text.past_budget's): then it
    counts as cut, as a value the output cap cut does (its paths null, counted as cut by the
    reading, matching no condition), never as a text that has none of the paths."""
    if reason is None:
        return False
    page.cut[-1] = True
    for column in page.columns:
        column.append(None)
    return True


def read_paths(page: PageRead, request: ReadRequest, tree: Any, text: str | None) -> None:
    """The paths of one readable value (`text`: a TEXT value's text, for a path of no steps: the
    payload itself, its JSON or else its text)."""
    found, missed, known, columns = page.found, page.missed, request.known, page.columns
    for p, steps in enumerate(request.paths):
        if not steps:
            columns[p].append(text if tree is None and text is not None else tree)
            if not found[p]:
                found[p] = True
                known.add(p)
            continue
        if len(steps) == 1 and type(tree) is dict and found[p]:
            # The common path (one key into a record's map, a key some value had): a plain get.
            value = tree.get(steps[0], MISSING)
            columns[p].append(CUT if type(value) is Cut else value)
            continue
        value, depth, parent = read_path(tree, steps)
        columns[p].append(value)
        if value is MISSING:
            if not found[p]:  # a hint is only for a path no value had
                note_miss(missed, p, depth, steps[depth], keys_of(parent, MISS_KEYS))
        elif value is not CUT and not found[p]:
            found[p] = True
            known.add(p)


#: Keys kept of a mapping where a path stopped: enough to find the nearest, bounded for a huge one.
MISS_KEYS = 200


def note_miss(missed: list[Any], p: int, depth: int, key: str | int, keys: tuple[str, ...]) -> None:
    known = missed[p]
    if known is None or depth > known[0]:
        missed[p] = (depth, key, set(keys[:MISS_KEYS]))
    elif depth == known[0] and len(known[2]) < MISS_KEYS:
        known[2].update(keys[:MISS_KEYS - len(known[2])])


__all__ = ["MISS_KEYS", "Lazy", "PageRead", "ReadRequest", "note_miss", "read_paths", "read_view",
           "tree_of"]
