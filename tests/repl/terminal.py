"""The real `cqlsh-ext` in a pseudo-terminal, read the way a person reads the screen.

prompt_toolkit draws with escape sequences and redraws only what changed, so the raw byte stream
is not what the screen shows. `Term` keeps the output with escape sequences removed (the text
that was drawn, in order) and matches regular expressions against what arrived since the last
match. It also answers the terminal's cursor-position requests with the cursor of a terminal emulator
(pyte) fed the same bytes, as a real terminal does: without an answer prompt_toolkit hides the
bottom toolbar (its height depends on the position). `display()` is that emulator's screen.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pexpect
import pyte
from shell_runner import CQLSH_EXT, isolated_env

# CSI (colours, cursor moves), OSC (titles), and the few two-byte escapes prompt_toolkit uses.
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI
                      r"|\x1b\][^\x07\x1b]*(\x07|\x1b\\)"  # OSC
                      r"|\x1b[()][0-9A-Za-z]|\x1b[=>78]")
_CPR_REQUEST = "\x1b[6n"

#: Generous: the suite runs on loaded 2-core machines.
TIMEOUT = 60.0


#: The bottom toolbar's row under its full or its short labels (cqlsh_ext/repl/toolbar.py).
_TOOLBAR = re.compile(r"(keyspace |ks:)\S+\s.*(consistency |cl:)[A-Z_]+")
_PROMPT = re.compile(r"cqlsh(:\w+)?>")


def clean(raw: str) -> str:
    return _ESCAPES.sub("", raw).replace("\r", "").replace("\x08", "").replace("\x07", "")


def printed(text: str) -> list[str]:
    """The non-blank lines a statement printed, read from the drawn text: not the prompt, nor the
    bottom toolbar (redrawn when the screen settles, which under load can land between a
    statement's output and the next prompt)."""
    return [line for line in text.splitlines()
            if line.strip() and not _PROMPT.search(line) and not _TOOLBAR.search(line)]


class Term:
    def __init__(self, args: list[str], home: Path, env: dict[str, str] | None = None,
                 rows: int = 40, cols: int = 160, program: str = CQLSH_EXT, cwd: Path | None = None) -> None:
        full_env = isolated_env(home)
        full_env.update({"TERM": "xterm-256color", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"})
        full_env.pop("PAGER", None)
        full_env.update(env or {})
        self.child = pexpect.spawn(program, args, env=full_env, dimensions=(rows, cols), cwd=cwd,
                                   encoding="utf-8", codec_errors="replace", timeout=TIMEOUT)
        self.raw = ""
        self.text = ""
        self.pos = 0
        self._answered = 0
        # What the screen shows, as a terminal of this size renders the same bytes.
        self.screen = pyte.Screen(cols, rows)
        self._stream = pyte.Stream(self.screen)

    # ------------------------------------------------------------------ reading

    def _pump(self, timeout: float) -> bool:
        """Read what is available (waiting up to `timeout`); False at end of output."""
        try:
            chunk = self.child.read_nonblocking(65536, timeout=timeout)
        except pexpect.TIMEOUT:
            return True
        except pexpect.EOF:
            return False
        self.raw += chunk
        self._stream.feed(chunk)
        requests = self.raw.count(_CPR_REQUEST)
        while self._answered < requests:
            # Where the cursor is on the emulated screen, as a terminal answers.
            cursor = self.screen.cursor
            self.child.send(f"\x1b[{cursor.y + 1};{cursor.x + 1}R")
            self._answered += 1
        # Clean the whole stream: an escape sequence may be split between reads.
        self.text = clean(self.raw)
        return True

    def expect(self, pattern: str, timeout: float = TIMEOUT) -> re.Match[str]:
        """Wait for `pattern` (a regex) in the output after the previous match."""
        regex = re.compile(pattern)
        deadline = time.monotonic() + timeout
        while True:
            match = regex.search(self.text, self.pos)
            if match:
                self.pos = match.end()
                return match
            left = deadline - time.monotonic()
            if left <= 0:
                break
            if not self._pump(min(left, 0.5)):
                match = regex.search(self.text, self.pos)
                if match:
                    self.pos = match.end()
                    return match
                raise AssertionError(f"cqlsh-ext exited before {pattern!r}; output:\n{self.tail()}")
        raise AssertionError(f"no {pattern!r} within {timeout:.0f} s; output since the last match:\n"
                             f"{self.text[self.pos:][-3000:]}")

    def display(self) -> list[str]:
        """The screen's rows as a person sees them now (trailing blanks removed)."""
        self._pump(0.2)
        return [row.rstrip() for row in self.screen.display]

    def since(self) -> str:
        """Output not yet consumed by expect()."""
        return self.text[self.pos:]

    def tail(self, chars: int = 3000) -> str:
        return self.text[-chars:]

    def prompt(self, timeout: float = TIMEOUT) -> None:
        """Wait for the main prompt (prompt_toolkit draws its trailing space as a cursor move)."""
        self.expect(r"cqlsh(:[\w]+)?>", timeout)

    # ------------------------------------------------------------------ typing

    def type(self, text: str) -> None:
        self.child.send(text)

    def paste(self, text: str) -> None:
        """`text` pasted as a terminal pastes into a program that asked for bracketed paste,
        written as the program takes it (a long text fills the terminal's buffer: the screen is
        read meanwhile, or both would wait on each other)."""
        data = f"\x1b[200~{text}\x1b[201~".encode()
        fd = self.child.child_fd
        blocking = os.get_blocking(fd)
        os.set_blocking(fd, False)
        try:
            while data:
                try:
                    data = data[os.write(fd, data[:4096]):]
                except BlockingIOError:
                    if not self._pump(0.05):
                        raise AssertionError(f"cqlsh-ext exited during a paste:\n{self.tail()}") from None
        finally:
            os.set_blocking(fd, blocking)

    def enter(self) -> None:
        self.child.send("\r")

    def run(self, statement: str, until: str = r"\(\d+ rows\)", timeout: float = TIMEOUT) -> str:
        """Type a statement, press Enter, wait for `until`; the output up to there."""
        start = len(self.text)
        self.type(statement)
        self.enter()
        match = self.expect(until, timeout)
        return self.text[start:match.end()]

    def ctrl(self, letter: str) -> None:
        self.child.send(chr(ord(letter.lower()) - ord("a") + 1))

    # ------------------------------------------------------------------ ending

    def exit(self, timeout: float = TIMEOUT) -> int:
        """Ctrl-D on an empty line; the exit status."""
        self.ctrl("d")
        deadline = time.monotonic() + timeout
        again = time.monotonic() + 5
        while self._pump(0.5):
            now = time.monotonic()
            if now > deadline:
                raise AssertionError(f"cqlsh-ext did not exit on Ctrl-D; output:\n{self.tail()}")
            if now > again:  # as a person would: the line was not empty yet, press it again
                self.ctrl("d")
                again = now + 5
        self.child.wait()
        return self.child.exitstatus if self.child.exitstatus is not None else -1

    def finish(self, timeout: float = TIMEOUT) -> int:
        """Read until the program exits by itself (a script: -e, -f); its exit status."""
        deadline = time.monotonic() + timeout
        while self._pump(0.5):
            if time.monotonic() > deadline:
                raise AssertionError(f"cqlsh-ext did not exit within {timeout:.0f} s; output:\n{self.tail()}")
        self.child.wait()
        return self.child.exitstatus if self.child.exitstatus is not None else -1

    def close(self) -> None:
        if self.child.isalive():
            self.child.terminate(force=True)


def lines_read(rows: list[str], cols: int) -> list[str]:
    """The screen's rows as the lines a person reads and copies: a path or a web address wider than
    the screen, alone on its line, that the terminal went on with on the next row (its row filled to
    the last column, the next one going on at its first) is one line; every other row is a line of
    its own, so that a word the terminal cut at its edge reads as the two it shows ('HEL' / 'P')."""
    from cqlsh_ext.common.text import is_path

    lines: list[str] = []
    joined = False
    for row in rows:
        whole = (lines[-1] + row).strip() if joined and row[:1].strip() else ""
        if whole and " " not in whole and is_path(whole):
            lines[-1] += row
        else:
            lines.append(row)
        joined = len(row) == cols
    return lines


def write_script(path: Path, body: str) -> Path:
    path.write_text("#!/bin/sh\n" + body)
    os.chmod(path, 0o755)
    return path
