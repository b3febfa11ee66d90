"""What a stored value holds besides the frames of its outer container, which no reading of it
shows: an edit keeps those bytes where they were, a rewrite refuses the value (a new chain would
drop them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cqlsh_ext.payload.view import BlobView


@dataclass(frozen=True)
class Beside:
    """Bytes a stored value holds besides its outer container's frames, which no reading of it
    shows: skippable frames before the first frame (`before`; not the container's own header),
    skippable frames or a trailer after the last (`after`), said in words (`what`); `refused` says
    why they cannot be kept (a seek table records the frames' sizes, which a new value changes; a
    skippable frame between frames)."""

    before: bytes = b""
    after: bytes = b""
    what: str = ""
    refused: str = ""


def beside(view: BlobView, stored: bytes, cap: int) -> Beside:
    """What `stored` holds besides the frames of its outer container (Beside)."""
    from cqlsh_ext.codecs.capabilities import Headers

    outer = next((layer.fmt for layer in view.layers if layer.fmt is not None), None)
    if outer is None:
        return Beside()
    label = outer.label
    frames: Any = None
    if isinstance(outer, Headers):
        try:
            frames = outer.headers(stored).get("frames")
        except Exception:  # a header the INSPECT reader cannot walk: the decoder's word below
            frames = None
    before, after = b"", b""
    words: list[str] = []
    if isinstance(frames, list) and frames:
        data = [f for f in frames
                if isinstance(f, dict) and not f.get("skippable") and "trailing_bytes" not in f]
        if any(isinstance(f, dict) and f.get("seek_table") for f in frames):
            table = next(f for f in frames if isinstance(f, dict) and f.get("seek_table"))
            return Beside(refused=f"a seek table follows its {label} frames ({table.get('size')} bytes): it "
                                  "records their sizes, which a new value changes; not rewritten here")
        first = data[0].get("offset") if data else None
        if isinstance(first, int) and first > 0:
            # Skippable frames before the first frame are kept; bytes there that none covers are the
            # container's own header (dcz's, naming its dictionary), which the new value writes.
            skipped = [int(f["offset"]) for f in frames if isinstance(f, dict) and f.get("skippable")
                       and isinstance(f.get("offset"), int) and f["offset"] < first]
            if skipped and min(skipped) > 0:
                return Beside(refused=f"skippable frames follow its {label} header: not rewritten here")
            if skipped:
                before = stored[:first]
                words.append(f"{len(before):,} bytes of skippable frames before its {label} frame")
        last = data[-1] if data else None
        if last is not None and isinstance(last.get("compressed_size"), int):
            end = int(last["offset"]) + int(last["compressed_size"])
            inner = [f for f in frames if isinstance(f, dict) and f.get("skippable")
                     and int(data[0]["offset"]) < int(f.get("offset", 0)) < end]
            if inner:
                return Beside(refused=f"a skippable frame sits between its {label} frames: not rewritten "
                                      "here")
            after = stored[end:]
    if not after:
        try:
            found = outer.decode(stored, cap).headers.get("trailing_bytes", 0)
        except Exception:  # it decoded for the view: a second time cannot fail but on memory
            found = 0
        trailing = found if isinstance(found, int) else 0
        if trailing:
            after = stored[len(stored) - trailing:]
    if after:
        words.append(f"{len(after):,} bytes after its {label} data")
    return Beside(before, after, "; ".join(words))
