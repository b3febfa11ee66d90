"""A secret key of the user's own, in a file at a fixed place (the journals' seal, the --resume
tokens' digest): 32 random bytes, made 0600 (its directory 0700 when made), read only through a
regular file of the user's that nobody else can read or write, never printed. One reading and one
making for every such key: each caller names its file and what it is ("the journal key")."""

from __future__ import annotations

import os
import stat

KEY_BYTES = 32


class KeyRefused(Exception):
    """The key's file is there but cannot be a key of the user's alone, or cannot be made; str() is
    the one line, naming the file."""


def read_key(path: str, what: str) -> bytes:
    """The key in `path`; FileNotFoundError when there is none, KeyRefused when the file is a link,
    not a regular file, another user's, open to others or not a key."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        raise
    except OSError as err:
        if os.path.islink(path):
            raise KeyRefused(f"{what} {path} is a symbolic link: refused (it must be a file of "
                             "yours)") from None
        raise KeyRefused(f"{what} {path} cannot be read: {err.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise KeyRefused(f"{what} {path} is not a regular file: refused")
        if st.st_uid != os.geteuid():
            raise KeyRefused(f"{what} {path} belongs to another user (uid {st.st_uid}): refused")
        if stat.S_IMODE(st.st_mode) & 0o077:
            raise KeyRefused(f"{what} {path} is open to others ({stat.filemode(st.st_mode)[1:]}): "
                             "refused (chmod 600 it if nobody else could have read it)")
        data = os.read(fd, KEY_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) != KEY_BYTES:
        raise KeyRefused(f"{what} {path} is not a key of {KEY_BYTES} bytes: refused")
    return data


def make_key(path: str, what: str) -> bool:
    """A new key at `path`, written whole under another name and linked into place (another process
    making one at the same moment keeps its own: the first linked is the key); False when there was
    one already. KeyRefused when it cannot be made."""
    directory = os.path.dirname(path)
    name = os.path.basename(path)
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        temporary = os.path.join(directory, f".{name}.{os.getpid()}.new")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            os.write(fd, os.urandom(KEY_BYTES))
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(temporary, path)
        except FileExistsError:
            return False  # made before, or a moment ago by another process: that one is the key
        finally:
            os.unlink(temporary)
    except OSError as err:
        raise KeyRefused(f"{what} {path} cannot be made: {err.strerror}") from None
    return True


def user_key(path: str, what: str) -> bytes:
    """The key in `path`, made first when there is none; KeyRefused when it cannot be had."""
    try:
        return read_key(path, what)
    except FileNotFoundError:
        make_key(path, what)
    try:
        return read_key(path, what)
    except FileNotFoundError:
        raise KeyRefused(f"{what} {path} could not be made") from None
