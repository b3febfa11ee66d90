"""Helpers shared by the Docker tests: when they are on, and running a command loudly."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass

import pytest

ENABLED = os.environ.get("CI") == "true" or os.environ.get("CQLSH_EXT_DOCKER_TESTS") == "1"
SETUP_HINT = ("run tools/docker/setup as root (installs Debian's docker.io, starts dockerd, "
              "makes the base image)")


def run(args: list[str], timeout: float = 180, check: bool = True, **kw) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(args, capture_output=True, text=True, timeout=timeout, **kw)
    if check and proc.returncode != 0:
        pytest.fail(f"{' '.join(args)!s} exited {proc.returncode}\n--- stdout\n{proc.stdout[-4000:]}"
                    f"\n--- stderr\n{proc.stderr[-4000:]}", pytrace=False)
    return proc


@dataclass
class Image:
    tag: str
    base: str
    build_seconds: float
    size_bytes: int
    inspect: dict

    def run(self, *args: str, docker_args: tuple[str, ...] = (), network: str = "none",
            **kw) -> subprocess.CompletedProcess[str]:
        """`docker run --rm`; no network unless asked (the test Cassandra needs "host": loopback)."""
        return run(["docker", "run", "--rm", "--pull", "never", "--network", network, *docker_args, self.tag,
                    *args], **kw)
