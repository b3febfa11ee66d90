"""A directory only its owner may enter (the write journals, `cqlsh-ext mcp`'s export files): made
0700 when missing, or the one there checked: a directory, not a link, the user's own. One that others
may enter is closed (made 0700, and said) or refused, as its caller chooses: one check for both."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass


class NotPrivate(Exception):
    """The directory cannot be made, or is not the user's alone; str() is the one line."""


@dataclass(frozen=True)
class PrivateDirectory:
    #: A line to say when a directory open to others was closed (None: nothing to say).
    note: str | None
    #: The directory as checked (lstat), to hold a descriptor opened afterwards to.
    checked: os.stat_result


def owner_only_directory(directory: str, what: str, why: str, hint: str,
                         close_open: bool) -> PrivateDirectory:
    """Make `directory` (0700, its parents as the umask says) or check the one there. `what` names it
    in the lines ("the journal directory"), `why` says why it must be the user's alone, `hint` how
    to name another ("--journal-dir DIR"; "": none). A directory this call made is 0700 whatever
    the umask; one there already and open to others is made 0700 when `close_open` (`note` says
    so), else refused. Raises NotPrivate."""
    named = f"{what} {directory}"
    hinted = f" ({hint})" if hint else ""
    try:
        try:
            os.makedirs(directory, mode=0o700)
            made = True
        except FileExistsError:
            made = False
        st = os.lstat(directory)
    except OSError as err:
        raise NotPrivate(f"{named} cannot be made: {err.strerror}") from None
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        raise NotPrivate(f"{named} is not a directory (a link or a file): refused{hinted}")
    if st.st_uid != os.geteuid():
        raise NotPrivate(f"{named} belongs to another user (uid {st.st_uid}): refused, {why}{hinted}")
    mode = stat.S_IMODE(st.st_mode)
    if made:  # 0700 whatever the umask left: nothing of anyone's is changed
        if mode != 0o700:
            try:
                os.chmod(directory, 0o700)
                st = os.lstat(directory)
            except OSError as err:
                raise NotPrivate(f"{named} cannot be made: {err.strerror}") from None
        return PrivateDirectory(None, st)
    if not mode & 0o077:
        return PrivateDirectory(None, st)
    shown = stat.filemode(st.st_mode)
    if not close_open:
        raise NotPrivate(f"{named} is open to others ({shown[1:]}): refused, {why}: chmod 700 it, or name "
                         f"another{hinted}")
    try:
        os.chmod(directory, 0o700)
        st = os.lstat(directory)
    except OSError as err:
        raise NotPrivate(f"{named} is open to others ({shown}) and cannot be closed: "
                         f"{err.strerror}") from None
    return PrivateDirectory(f"{named} was open to others ({shown[1:]}): made 0700 ({why})", st)
