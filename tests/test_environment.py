"""cqlsh-ext installed beside what a data engineer's environment already holds: pandas 3.1.1, an older
boto3 and protobuf of another major (ENVIRONMENT). `pip install` of the pure wheel, then of its extras,
keeps every one of them (pyproject.toml's ranges admit them; the spark extra's pyspark 3.5 predates
pandas 3: its metadata says pandas<3), and the shell there works on them: a protobuf
payload read by its descriptor set (protobuf 5) from the test server, a SigV4 login signed through
boto3 1.40's session (upstream/seams.py's Session._session). These are the lowest bounds pyproject.toml
gives boto3 and protobuf (tests/test_lock.py holds every bound to a version tested).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement

REPO = Path(__file__).resolve().parents[1]
#: What the environment holds before cqlsh-ext comes: pip must keep each at this version.
ENVIRONMENT = {"pandas": "3.1.1", "boto3": "1.40.0", "protobuf": "5.29.6"}
#: The installs, one after another: the package alone, then every extra of a user's (api brings
#: parquet's pyarrow, and polars and DuckDB; mcp the MCP SDK), in one pip run (each run resolves anew).
EXTRAS = ("", "api,mcp")

pytestmark = [pytest.mark.server, pytest.mark.timeout(1800), pytest.mark.xdist_group("environment")]


def _env(home: Path) -> dict[str, str]:
    """A user's environment: none of the tests' paths or settings, a HOME of the test's own."""
    left_out = ("PYTHONPATH", "VIRTUAL_ENV", "CQLSH_", "PIP_REQUIRE", "AWS_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(left_out)}
    home.mkdir(parents=True, exist_ok=True)
    return env | {"HOME": str(home), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}


def _pip(venv: Path, env: dict[str, str], *args: str) -> str:
    run = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", *args], env=env, capture_output=True,
                         text=True, timeout=1200)
    assert run.returncode == 0, (args, run.stdout[-3000:], run.stderr[-3000:])
    return run.stdout


def _versions(venv: Path, env: dict[str, str]) -> dict[str, str]:
    listed = json.loads(_pip(venv, env, "list", "--format", "json"))
    return {re.sub(r"[-_.]+", "-", p["name"]).lower(): p["version"] for p in listed}


@pytest.fixture(scope="module")
def environment(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A virtualenv holding ENVIRONMENT, then cqlsh-ext's wheel and each extra installed by pip into it,
    the environment's versions checked after every install."""
    root = tmp_path_factory.mktemp("environment")
    wheels = root / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet",
                    "-w", str(wheels), str(REPO)], check=True, capture_output=True, timeout=600)
    (wheel,) = wheels.glob("cqlsh_ext-*.whl")
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=600)
    env = _env(root / "home")
    _pip(venv, env, "install", "--quiet", "--no-compile",
         *(f"{name}=={version}" for name, version in ENVIRONMENT.items()))
    for extra in EXTRAS:  # (--no-compile: pip's choices are the same, without byte-compiling pandas & co.)
        _pip(venv, env, "install", "--quiet", "--no-compile", f"{wheel}[{extra}]" if extra else str(wheel))
        held = _versions(venv, env)
        assert {name: held.get(name) for name in ENVIRONMENT} == ENVIRONMENT, extra or "no extra"
        assert "cqlsh-ext" in held
    _pip(venv, env, "check")
    return venv, env


def test_pip_keeps_the_environment_s_pandas_boto3_and_protobuf(environment) -> None:
    venv, env = environment
    held = _versions(venv, env)
    # what each extra brought is there beside them, at versions of pyproject.toml's ranges
    assert {"pyarrow", "polars", "duckdb", "mcp", "cqlsh"} <= set(held)
    # Spark mode's extra is the one that would not keep pandas 3: pyspark 3.5 predates it, and the
    # wheel says so (pip would take pandas 2; resolving it here would download pyspark's 300 MB sdist)
    (wheel,) = (venv.parent / "wheels").glob("cqlsh_ext-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        metadata = archive.read(name).decode()
    spark = [Requirement(line.split(": ", 1)[1]) for line in metadata.splitlines()
             if line.startswith("Requires-Dist: ") and "extra == \"spark\"" in line]
    (pandas,) = [r for r in spark if r.name == "pandas"]
    assert not pandas.specifier.contains(ENVIRONMENT["pandas"]) and pandas.specifier.contains("2.2.3")
    assert not any(r.name in ("boto3", "protobuf") for r in spark)


def test_the_shell_there_reads_a_protobuf_payload_by_its_descriptor(environment, cassandra,
                                                                   tmp_path) -> None:
    from protobuf_producer import order_descriptor_set

    venv, env = environment
    path, Order = order_descriptor_set(tmp_path)  # protobuf's own classes (this process's protobuf)
    message = Order(id=9, customer="Grace", status=1)
    message.items.add(sku="SKU-2", qty=1)
    keyspace = cassandra.create_keyspace("environment")
    session = cassandra.session(keyspace)
    session.execute("CREATE TABLE events (id int PRIMARY KEY, body blob)")
    session.execute("INSERT INTO events (id, body) VALUES (1, %s)", (message.SerializeToString(),))
    session.shutdown()
    rc = tmp_path / "cqlshrc"
    rc.write_text(f"[cqlsh_ext.decode]\n{keyspace}.events.body = protobuf:acme.Order@{path}\n")
    shell = subprocess.run([str(venv / "bin" / "cqlsh-ext"), *cassandra.cqlsh_args, "--cqlshrc", str(rc),
                            "--output-format", "json", "-e", f"SELECT body FROM {keyspace}.events"],
                           env=env, capture_output=True, text=True, timeout=300)
    assert shell.returncode == 0, shell.stderr
    payload = json.loads(shell.stdout)["body"]["payload"]
    assert payload == {"id": 9, "customer": "Grace", "items": [{"sku": "SKU-2", "qty": 1}], "status": "PAID"}
    version = subprocess.run([str(venv / "bin" / "python"), "-c",
                              "import google.protobuf as p; print(p.__version__)"],
                             env=env, capture_output=True, text=True, check=True, timeout=120)
    assert version.stdout.strip() == ENVIRONMENT["protobuf"]


def test_a_sigv4_login_is_signed_through_the_environment_s_boto3(environment) -> None:
    venv, env = environment
    # Keyspaces' login as cqlsh-ext builds it (keyspaces.auth.make_provider: a session of another
    # region derived through boto3's Session._session, cassandra-sigv4's authenticator over it), its
    # answer to the server's nonce signed with the credentials the environment gives.
    code = (
        "import boto3\n"
        "from cqlsh_ext.keyspaces.auth import make_provider\n"
        "provider = make_provider('eu-west-1', 'cassandra.eu-west-1.amazonaws.com', None, None)\n"
        "auth = provider.new_authenticator('cassandra.eu-west-1.amazonaws.com')\n"
        "auth.initial_response()\n"
        "print(boto3.__version__, provider.session().region_name)\n"
        "print(auth.evaluate_challenge(b'nonce=0123456789abcdef0123456789abcdef'))\n")
    signer = env | {"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "not-a-real-secret",
                    "AWS_DEFAULT_REGION": "us-east-1"}
    run = subprocess.run([str(venv / "bin" / "python"), "-c", code], env=signer, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    versions, answer = run.stdout.splitlines()
    assert versions == f"{ENVIRONMENT['boto3']} eu-west-1"
    assert "access_key=AKIDEXAMPLE" in answer and re.search(r"signature=[0-9a-f]{64}", answer), answer
