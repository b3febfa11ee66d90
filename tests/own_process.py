"""A test that sends SIGINT to itself (os.kill(os.getpid(), SIGINT), signal.raise_signal: a
Ctrl-C handler's own test) runs in a forked process of its own, so that its press never reaches
the pytest worker: a press handled there after its handler was put back, or inside a callback
Python runs between two bytecodes (hypothesis's gc callback, an import lock's weakref callback),
raised a KeyboardInterrupt that Python dropped with a traceback at the run's end."""

from __future__ import annotations

import functools
import os
import sys
import traceback
from collections.abc import Callable
from typing import Any


def in_own_process(test: Callable[..., None]) -> Callable[..., None]:
    """`test` run in a child forked for it (its fixtures are the parent's, as given); it fails
    when the child does, its traceback on the child's standard error (captured as the test's)."""

    @functools.wraps(test)
    def run(*args: Any, **kwargs: Any) -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the child: the test, then out at once (no pytest clean-up of the parent's)
            code = 1
            try:
                test(*args, **kwargs)
                code = 0
            except BaseException:  # a KeyboardInterrupt too: the test's outcome
                traceback.print_exc()
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0, f"{test.__name__} failed in its own process (above)"

    return run
