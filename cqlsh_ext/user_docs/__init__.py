"""The user's guides wherever cqlsh-ext runs from: `cqlsh-ext docs [TOPIC]` (cli.py).

HELP and --help point to a guide by its topic (`cqlsh-ext docs edit`), never by a path in the
source tree: a pip user has no docs/ directory. The guides are the checkout's docs/*.md, which the
package installs into <prefix>/share/doc/cqlsh-ext (pyproject.toml's data-files, as the manual page
goes into share/man), so the same command finds them in a checkout, a virtualenv, a `pip install
--user` and the Docker image. A guide may hold a part written when it is shown (a line
`<!-- generated: module:function -->`, the function named answering its Markdown: the features'
reference, from the declarations), the function imported by its name only then.
"""

from __future__ import annotations

import re
import site
import sys
from pathlib import Path

__all__ = ["FOR_CONTRIBUTORS", "GuideNotFound", "expanded", "guide", "guides", "shown", "title"]

#: Where an installed package's guides are, under its prefix (pyproject.toml's data-files).
INSTALLED = Path("share", "doc", "cqlsh-ext")
#: docs/ files that are no user's guide: the contributors' map and the measurements' notebook
#: and the recipes for maintainers (read in the source tree); `cqlsh-ext docs` neither lists nor shows them.
FOR_CONTRIBUTORS = frozenset({"architecture", "extending", "performance"})


class GuideNotFound(LookupError):
    """A topic no guide answers; its message is the user's one line."""


def _directories() -> list[Path]:
    """Where guides may be, nearest first: the checkout this package runs from, then the prefixes
    pip installs into (the environment's, then the user's)."""
    root = Path(__file__).resolve().parents[2]
    # In a checkout only: an installed package's parent is site-packages, where another
    # distribution's stray docs/ may lie.
    checkout = [root / "docs"] if (root / "pyproject.toml").is_file() else []
    prefixes = [Path(sys.prefix), Path(sys.base_prefix), Path(site.getuserbase())]
    return [*checkout, *(prefix / INSTALLED for prefix in prefixes)]


def guides() -> dict[str, Path]:
    """Every guide by its topic (its file's name less `.md`), from the first directory that has
    any: a checkout's own guides, never mixed with an older installed copy."""
    for directory in _directories():
        found = sorted(directory.glob("*.md")) if directory.is_dir() else []
        if found:
            return {path.stem: path for path in found if path.stem not in FOR_CONTRIBUTORS}
    return {}


def title(path: Path) -> str:
    """A guide's first heading, as the list of guides shows it."""
    with path.open(encoding="utf-8") as text:
        for line in text:
            if line.startswith("#"):
                return line.lstrip("#").strip()
    return ""


def guide(topic: str) -> Path:
    """The guide of `topic` (as typed: `edit`, `EDIT`, `edit.md`, `docs/edit.md`); raises
    GuideNotFound with the topic meant, or with where guides were looked for when none is there."""
    from cqlsh_ext.common.text import nearest

    known = guides()
    if not known:
        looked = ", ".join(str(directory) for directory in _directories())
        raise GuideNotFound(f"no guides are installed with this cqlsh-ext (looked in {looked})")
    wanted = Path(topic.lower()).name.removesuffix(".md")
    if wanted in known:
        return known[wanted]
    near = nearest(wanted, known)
    raise GuideNotFound(f"no guide on {topic!r}" + (f" (did you mean {near}?)" if near else "")
                        + "; `cqlsh-ext docs` lists them")


#: A line of a guide that the Markdown a function answers stands for (`module:function`).
_GENERATED = re.compile(r"^<!-- generated: ([\w.]+):(\w+) -->$", re.MULTILINE)


def expanded(markdown: str) -> str:
    """A guide's Markdown with each generated part written (its function imported by name now)."""
    from importlib import import_module

    return _GENERATED.sub(lambda found: getattr(import_module(found.group(1)), found.group(2))().rstrip("\n"),
                          markdown)


def shown(topic: str, width: int) -> str:
    """The guide of `topic` (guide()) laid out for a screen `width` columns wide (render), its
    generated parts written (expanded)."""
    from cqlsh_ext.user_docs.render import Guides, anchors, render

    path = guide(topic)
    texts = {name: other.read_text(encoding="utf-8") for name, other in guides().items()}
    texts[path.stem] = expanded(texts[path.stem])
    headings = Guides({name: anchors(text) for name, text in texts.items()})
    return render(texts[path.stem], path.stem, headings, width)
