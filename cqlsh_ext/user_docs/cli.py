"""`cqlsh-ext docs [TOPIC]`: the list of guides, or one guide laid out for the terminal's width and
paged as `man` is (into a pipe, at COLUMNS or 80 columns)."""

from __future__ import annotations

import argparse
import sys

from cqlsh_ext.common.text import fit, screen_width
from cqlsh_ext.user_docs import GuideNotFound, guides, shown, title


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cqlsh-ext docs",
                                     description="Show one of cqlsh-ext's guides (Markdown), or list them.")
    parser.add_argument("topic", nargs="?", help="a guide's topic, as the list names it (edit, queries, ...)")
    return parser


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    width = _width()
    if args.topic is None:
        known = guides()
        if not known:
            print("cqlsh-ext docs: no guides are installed with this cqlsh-ext", file=sys.stderr)
            return 1
        room = max(len(topic) for topic in known)
        lines = [f"  {topic:<{room}}  {title(path)}" for topic, path in known.items()]
        print("\n".join(fit(["Guides (cqlsh-ext docs TOPIC shows one):", *lines], width, cut=False)))
        return 0
    try:
        text = shown(args.topic, width)
    except GuideNotFound as err:
        print(f"cqlsh-ext docs: {err}", file=sys.stderr)
        return 2
    if sys.stdout.isatty():
        import pydoc

        pydoc.pager(text)  # $PAGER or less, as man pages
    else:
        sys.stdout.write(text)
    return 0


def _width() -> int:
    """The terminal's width; into a pipe or a file COLUMNS, else 80, as man lays out a page."""
    import os

    width = screen_width(sys.stdout)
    if width:
        return width
    columns = os.environ.get("COLUMNS", "")
    return int(columns) if columns.isdigit() and int(columns) >= 20 else 80
