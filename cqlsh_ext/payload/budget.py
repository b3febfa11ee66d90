"""One budget per stored value: how deep, how many nodes and how much text decoding and showing it
may cost.

A stored value is attacker-controlled. Formats with back-references (a memo, string
references, shared names and strings, object handles) describe a large structure in a few
bytes, so a cap on the bytes decoded is not enough: what counts is what a walk *visits*. Every
decoder that builds a tree and every renderer that walks one charges the same limits, and a
back-reference costs each time it is rendered, not once:

- no value renders more than `chars` characters (the output cap, `max_output_size`, 4 MiB by
  default) or visits more than `nodes` nodes (100,000 at the default cap, scaled with it);
- nothing is nested deeper than `depth` (64) levels;
- a JSON text is read as JSON up to JSON_DEPTH (512) levels of nesting, and up to `nodes` values:
  past either it is shown as stored, with the reason (payload.json_text.past_budget), and a path
  read in it counts as cut.

A value whose validity could not be established within the budget (a decoder stopped early) stays
hex with its reason; a valid value that a renderer stops is shown as far as it got, with
`(cut: over 100,000 nodes)`. The active budget of the value being decoded is a context variable,
set by payload.unwrap for each value, so decoders deep in a format need no extra argument.
"""

from __future__ import annotations

import contextvars
from dataclasses import dataclass

from cqlsh_ext.codecs.base import DEFAULT_CAP

#: Nesting levels walked at the most; deeper levels are shown as a marker.
MAX_DEPTH = 64
#: Nesting levels a JSON text is read to (json.loads follows about twice as many wherever it is
#: called from; the native core hands deeper texts back to the Python engine, which says why).
JSON_DEPTH = 512
#: Nodes (values, containers, map keys) visited per value at the default output cap.
MAX_NODES = 100_000
#: The node limit never goes below this, however small the output cap.
MIN_NODES = 1_000


class BudgetExceeded(Exception):
    """A walk reached the budget; str() is the reason shown after the cut (`over 100,000 nodes`)."""


def _size(n: int) -> str:
    # Not units.human_size: only these two exact spellings are needed here.
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return f"{n >> 20} MiB"
    if n >= 1 << 10 and n % (1 << 10) == 0:
        return f"{n >> 10} KiB"
    return f"{n:,} characters"


@dataclass(frozen=True)
class Budget:
    chars: int = DEFAULT_CAP
    nodes: int = MAX_NODES
    depth: int = MAX_DEPTH

    @classmethod
    def for_cap(cls, cap: int) -> Budget:
        """The budget of a value shown under the output cap `cap` (max_output_size)."""
        if cap == DEFAULT_CAP:
            return DEFAULT
        return cls(chars=max(cap, 1), nodes=max(MIN_NODES, MAX_NODES * cap // DEFAULT_CAP))

    def meter(self) -> Meter:
        return Meter(self)

    @property
    def nodes_reason(self) -> str:
        return f"over {self.nodes:,} nodes"

    @property
    def json_depth_reason(self) -> str:
        return f"nested deeper than {JSON_DEPTH} levels"

    @property
    def chars_reason(self) -> str:
        return f"over {_size(self.chars)} of text"

    @property
    def depth_reason(self) -> str:
        return f"nested deeper than {self.depth}"

    def trusts(self, source_size: int, indent: int | None) -> bool:
        """Whether a tree decoded from `source_size` bytes by a format without back-references
        is certainly within the budget: each node takes at least one byte, a node renders to at
        most 6 characters per byte (escaped control characters), and an indented line to at most
        512 more (orjson refuses nesting past 255 levels)."""
        per_node = 6 if indent is None else 518
        return source_size <= self.nodes and source_size * per_node <= self.chars


DEFAULT = Budget()


class Meter:
    """What one walk has spent of a budget. `node()` and `text()` raise BudgetExceeded past it."""

    __slots__ = ("budget", "nodes", "chars")

    def __init__(self, budget: Budget) -> None:
        self.budget = budget
        self.nodes = 0
        self.chars = 0

    def node(self, n: int = 1) -> None:
        self.nodes += n
        if self.nodes > self.budget.nodes:
            raise BudgetExceeded(self.budget.nodes_reason)

    def text(self, n: int) -> None:
        self.chars += n
        if self.chars > self.budget.chars:
            raise BudgetExceeded(self.budget.chars_reason)

    @property
    def chars_left(self) -> int:
        return max(self.budget.chars - self.chars, 0)


_ACTIVE: contextvars.ContextVar[Budget] = contextvars.ContextVar("cqlsh_ext_budget", default=DEFAULT)


def current() -> Budget:
    """The budget of the value being decoded (the default one outside payload.unwrap)."""
    return _ACTIVE.get()


def enter(budget: Budget) -> contextvars.Token[Budget]:
    """Make `budget` the active one (payload.unwrap, once per value); leave() with the token."""
    return _ACTIVE.set(budget)


def leave(token: contextvars.Token[Budget]) -> None:
    _ACTIVE.reset(token)
