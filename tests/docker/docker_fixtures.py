"""Fixtures of the Docker tests, imported by each module (a conftest.py here would shadow the suite's
own `conftest` module): `docker`, the CLI with an engine answering, or a loud failure (never a skip)
when the Docker tests are on (CI=true or CQLSH_EXT_DOCKER_TESTS=1); `image`, the project's image,
built once per session; and the Keyspaces-like endpoint of tests/keyspaces."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from dockerlib import SETUP_HINT, Image, run

# The Keyspaces-like endpoint (SigV4 verifier, TLS) of tests/keyspaces, for `docker run` against it.
from keyspaces.conftest import keyspaces_endpoint, moto_sts  # noqa: F401

from cqlsh_ext import __version__ as VERSION

ROOT = Path(__file__).resolve().parents[2]
TAG = os.environ.get("CQLSH_EXT_DOCKER_TAG", "cqlsh-ext:pytest")
LOCAL_BASE = os.environ.get("CQLSH_EXT_BASE_IMAGE", "cqlsh-ext-base:bookworm")


@pytest.fixture(scope="session")
def docker() -> str:
    """The docker CLI, with an engine answering; a loud failure (not a skip) otherwise."""
    cli = shutil.which("docker")
    if cli is None:
        pytest.fail(f"Docker image tests are on, but there is no docker CLI: {SETUP_HINT}", pytrace=False)
    proc = subprocess.run([cli, "info", "--format", "{{.ServerVersion}}"], capture_output=True, text=True,
                          timeout=60)
    if proc.returncode != 0:
        pytest.fail(f"Docker image tests are on, but no Docker engine answers ({proc.stderr.strip()}): "
                    f"{SETUP_HINT}", pytrace=False)
    return cli


@pytest.fixture(scope="session")
def image(docker: str) -> Image:
    base = os.environ.get("CQLSH_EXT_DOCKER_BASE_IMAGE")
    if not base:
        local = subprocess.run([docker, "image", "inspect", LOCAL_BASE], capture_output=True)
        base = LOCAL_BASE if local.returncode == 0 else ""
    args = [docker, "build", "--force-rm", "--network", "host", "--build-arg", f"VERSION={VERSION}"]
    if base:
        args += ["--build-arg", f"BASE_IMAGE={base}"]
    start = time.monotonic()
    proc = subprocess.run([*args, "--tag", TAG, str(ROOT)], capture_output=True, text=True, timeout=1200)
    seconds = time.monotonic() - start
    if proc.returncode != 0:
        where = base or "the Dockerfile default, which needs a registry: " + SETUP_HINT
        pytest.fail(f"docker build failed ({' '.join(args[1:])}); base image {where}\n{proc.stdout[-6000:]}"
                    f"\n{proc.stderr[-3000:]}", pytrace=False)
    # Tag the newest build stage (the layer cache of the next build; all cached, about a second) and
    # drop the untagged stages and images of earlier builds, so repeated runs do not fill the disk.
    run([*args, "--target", "build", "--tag", f"{TAG}-build", str(ROOT)], timeout=600)
    run([*args, "--target", "native", "--tag", f"{TAG}-native", str(ROOT)], timeout=600)
    for label in ("org.cqlsh-ext.stage=build", "org.cqlsh-ext.stage=native",
                  "org.opencontainers.image.title=cqlsh-ext"):
        run([docker, "image", "prune", "--force", "--filter", f"label={label}"])
    info = json.loads(run([docker, "image", "inspect", TAG]).stdout)[0]
    return Image(TAG, base or "Dockerfile default", seconds, int(info["Size"]), info)
