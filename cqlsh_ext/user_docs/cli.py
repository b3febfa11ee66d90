"""`cqlsh-ext docs [TOPIC]`: the list of guides, or one guide, paged on a terminal as `man` is."""

from __future__ import annotations

import argparse
import sys

from cqlsh_ext.user_docs import GuideNotFound, guide, guides, title


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cqlsh-ext docs",
                                     description="Show one of cqlsh-ext's guides (Markdown), or list them.")
    parser.add_argument("topic", nargs="?", help="a guide's topic, as the list names it (edit, queries, ...)")
    return parser


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    if args.topic is None:
        known = guides()
        if not known:
            print("cqlsh-ext docs: no guides are installed with this cqlsh-ext", file=sys.stderr)
            return 1
        width = max(len(topic) for topic in known)
        print("Guides (cqlsh-ext docs TOPIC shows one):")
        for topic, path in known.items():
            print(f"  {topic:<{width}}  {title(path)}")
        return 0
    try:
        path = guide(args.topic)
    except GuideNotFound as err:
        print(f"cqlsh-ext docs: {err}", file=sys.stderr)
        return 2
    text = path.read_text(encoding="utf-8")
    if sys.stdout.isatty():
        import pydoc

        pydoc.pager(text)  # $PAGER or less, as man pages; the plain text into a pipe
    else:
        sys.stdout.write(text)
    return 0
