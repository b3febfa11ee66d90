"""Auto-detection never reports random, text or JSON values as compressed (seeded sweeps)."""

from __future__ import annotations

import json
import random

from cqlsh_ext.codecs import registry
from cqlsh_ext.codecs.base import DecodeError

try:
    import brotli
except ImportError:  # optional dependency
    brotli = None



_WORDS = (
    "the of and to in is you that it he was for on are as with his they at be this have from or one had "
    "by word but not what all were we when your can said there use an each which she do how their if "
    "will up other about out many then them these so some her would make like him into time has look "
    "two more write go see number no way could people my than first water been call who oil its now"
).split()


def _texty(rng: random.Random) -> bytes:
    kind = rng.randrange(8)
    if kind == 0:  # prose
        s = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(2, 400))).capitalize() + "."
    elif kind == 1:  # JSON object
        s = json.dumps(
            {
                rng.choice(_WORDS): rng.choice(
                    [rng.random(), rng.randint(-9, 10**9), rng.choice(_WORDS), None, True, [1, 2, 3]]
                )
                for _ in range(rng.randint(1, 40))
            }
        )
    elif kind == 2:  # JSON array of records
        s = json.dumps(
            [{"id": rng.randint(0, 10**6), "tag": rng.choice(_WORDS)} for _ in range(rng.randint(1, 60))]
        )
    elif kind == 3:  # UUIDs, hex
        s = "-".join(f"{rng.getrandbits(32):08x}" for _ in range(rng.randint(2, 30)))
    elif kind == 4:  # base64
        import base64

        s = base64.b64encode(rng.randbytes(rng.randint(6, 2000))).decode()
    elif kind == 5:  # CSV / numbers
        s = "\n".join(
            ",".join(str(rng.randint(0, 99999)) for _ in range(5)) for _ in range(rng.randint(1, 80))
        )
    elif kind == 6:  # XML-ish / HTML
        s = "".join(f"<{w}>{rng.choice(_WORDS)}</{w}>" for w in rng.choices(_WORDS, k=rng.randint(1, 100)))
    else:  # non-ASCII UTF-8 text
        s = " ".join(
            rng.choice(["héllo", "naïve", "日本語", "Ελληνικά", "данные", "emoji 😀", "x"])
            for _ in range(rng.randint(2, 300))
        )
    data = s.encode()
    return data if len(data) >= 8 else data + b" padding"


def test_false_positives() -> None:
    rng = random.Random(20240601)
    hits: dict[str, list[bytes]] = {"random": [], "text": []}
    raised: dict[str, list[str]] = {"random": [], "text": []}
    for kind, make in (
        ("random", lambda: rng.randbytes(rng.randint(8, 4096))),
        ("text", lambda: _texty(rng)),
    ):
        for _ in range(20_000):
            value = make()
            try:
                if registry.decode_auto(value) is not None:
                    hits[kind].append(value)
            except DecodeError as e:
                raised[kind].append(str(e))
    print(
        f"\nfalse positives: random {len(hits['random'])}/20000 decoded, {len(raised['random'])} raised; "
        f"text {len(hits['text'])}/20000 decoded, {len(raised['text'])} raised"
    )
    assert not hits["random"] and not hits["text"]
    assert not raised["text"]
    assert len(raised["random"]) <= 2, raised["random"]  # a 3-byte gzip magic may occur by chance


def test_short_random_values_by_length() -> None:
    """Why MIN_AUTO_LENGTH is what it is: trial decodes of short random values."""
    rng = random.Random(7)
    saved = registry.MIN_AUTO_LENGTH
    counts = {}
    try:
        registry.MIN_AUTO_LENGTH = 1
        for n in range(1, 9):
            hits = 0
            for _ in range(20_000):
                try:
                    hits += registry.decode_auto(rng.randbytes(n)) is not None
                except DecodeError:
                    pass
            counts[n] = hits
    finally:
        registry.MIN_AUTO_LENGTH = saved
    print("\nrandom values decoded, by length (of 20000):", counts)
    assert all(counts[n] == 0 for n in range(registry.MIN_AUTO_LENGTH, 9))
