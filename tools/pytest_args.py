#!/usr/bin/env python3
"""bin/test's check of the arguments it hands pytest, before it installs or runs anything more:
pytest's own parser (with the plugins and tests/conftest.py's options) reads them; an argument it
does not take (`--fsat`) is said in one line, the nearest of bin/test's own flags or pytest's
named, and the exit status is 2.

    .venv/bin/python tools/pytest_args.py -k codecs -n 0     # nothing said, exit status 0
    .venv/bin/python tools/pytest_args.py --fsat             # one line on stderr, exit status 2
    python3 tools/pytest_args.py --before-setup --fsat       # the same, in a checkout never set up

In a checkout never set up (no pytest yet) `--before-setup` refuses at once a flag that is a near
miss of bin/test's own (`--fsat`), which needs no parser: the install it would start takes
minutes; pytest's parser reads the rest once the test tools are installed.

Run from the checkout (pytest's rootdir, whose pyproject.toml and conftest.py it reads).
"""

from __future__ import annotations

import difflib
import re
import sys

#: bin/test's own flags (its --help says them): what a mistyped one is most likely to be.
OWN_FLAGS = ("--fast", "--other-end", "--help")


def refusal(args: list[str]) -> str | None:
    """The one line for arguments pytest would refuse, or None when it takes them."""
    from _pytest.config import UsageError, get_config

    config = get_config(args)
    plugins = config.pluginmanager
    try:
        parsed = plugins.hook.pytest_cmdline_parse(pluginmanager=plugins, args=args)
    except UsageError as err:
        said = " ".join(str(err).split())
        unknown = re.search(r"unrecognized arguments: (.*?)(?: inifile:|$)", said)
        if unknown is None:
            return f"bin/test: {said.split('error: ', 1)[-1]} (pytest's): bin/test --help says what it takes"
        flags = unknown.group(1).split()
        near = difflib.get_close_matches(flags[0].split("=", 1)[0], [*OWN_FLAGS, *_pytest_flags(config)],
                                         n=1, cutoff=0.75)
        meant = f" (did you mean {near[0]}?)" if near else ""
        which = "flag" if len(flags) == 1 else "flags"
        return (f"bin/test: unknown {which} {', '.join(flags)}{meant}: bin/test --help says what it takes; "
                "pytest's own: .venv/bin/python -m pytest --help")
    parsed._ensure_unconfigure()
    return None


def near_own(args: list[str]) -> str | None:
    """The one line for a flag that is none of bin/test's own but a near miss of one (`--fsat`),
    or None: what is said before the test tools are installed (see the module doc)."""
    for arg in args:
        flag = arg.split("=", 1)[0]
        if flag.startswith("--") and flag not in OWN_FLAGS:
            near = difflib.get_close_matches(flag, OWN_FLAGS, n=1, cutoff=0.75)
            if near:
                return (f"bin/test: unknown flag {flag} (did you mean {near[0]}?): bin/test --help says what "
                        "it takes; pytest's own: .venv/bin/python -m pytest --help")
    return None


def _pytest_flags(config: object) -> list[str]:
    """The long flags pytest's parser knows (its groups' options), or none when it cannot say."""
    try:
        parser = config._parser  # type: ignore[attr-defined]
        options = [*parser._anonymous.options, *(o for group in parser._groups for o in group.options)]
        return [name for option in options for name in option.names() if name.startswith("--")]
    except AttributeError:
        return []


if __name__ == "__main__":
    from say import say  # tools/say.py: the scripts' one rule for what they say

    # The checkout on the path as `python -m pytest` puts it there: a conftest.py importing `tests.`
    # (tests/api's) is read as the run will read it.
    sys.path.insert(1, ".")

    given = sys.argv[1:]
    said = near_own(given[1:]) if given[:1] == ["--before-setup"] else refusal(given)
    if said is not None:
        say(said)
        sys.exit(2)
