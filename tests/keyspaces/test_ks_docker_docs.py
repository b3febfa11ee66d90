"""The container commands the docs give. For Amazon Keyspaces (docs/docker.md, the Dockerfile's
comment, the README): the same forms in each, and each logs in as written, with the real binary
against the SigV4-verifying endpoint (the image's entry point is this binary; tests/docker runs the
image itself where Docker is on); the host, port and test CA are added, as the endpoint is local.
For Compose: where only `docker-compose` exists is said before the first `docker compose`."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from keyspaces.ksharness import ALL_SECRETS, GOOD, PROFILE, REGION, REPO_ROOT, KeyspacesEndpoint

QUERY = "SELECT id, name FROM ks_test.users WHERE id = 1"


def docker_runs(text: str) -> list[list[str]]:
    """Every `docker run ... cqlsh-ext ARGS` command in `text` (continued lines joined, comment
    marks dropped), as its words."""
    lines = [re.sub(r"^#\s?", "", line) for line in text.splitlines()]
    joined = re.sub(r"\\\n\s*", " ", "\n".join(lines))
    return [shlex.split(line.strip(), comments=True) for line in joined.splitlines()
            if line.strip().startswith("docker run") and "--keyspaces" in line]


def forms(text: str) -> set[tuple[tuple[str, ...], tuple[str, ...]]]:
    """(what the run passes into the container: -e names and -v mounts; cqlsh-ext's arguments)."""
    found = set()
    for words in docker_runs(text):
        image = words.index("cqlsh-ext")
        passed = tuple(w for i, w in enumerate(words[:image]) if words[i - 1] in ("-e", "-v"))
        found.add((passed, tuple(words[image + 1:])))
    return found


def test_compose_v1_is_named_before_the_first_compose_command():
    for name in ("docs/docker.md", "docker-compose.yml"):
        text = (REPO_ROOT / name).read_text()
        before = text[:text.index("docker compose run")]
        assert "docker-compose" in before and "1.29.2" in before, name
    readme = (REPO_ROOT / "README.md").read_text()
    docker_section = readme[readme.index("## Docker"):readme.index("## More")]
    assert "only `docker-compose` exists" in docker_section


def test_the_docs_and_the_dockerfile_give_the_same_keyspaces_commands():
    docs = forms((REPO_ROOT / "docs" / "docker.md").read_text())
    dockerfile = forms((REPO_ROOT / "Dockerfile").read_text().split("\nARG ")[0])
    readme = forms((REPO_ROOT / "README.md").read_text())
    assert len(docs) == 2 and docs == dockerfile, (docs, dockerfile)
    assert readme <= docs, readme


@pytest.mark.parametrize("form", sorted(forms((REPO_ROOT / "docs" / "docker.md").read_text())))
def test_each_documented_form_logs_in_with_sigv4(keyspaces_endpoint: KeyspacesEndpoint, tmp_path: Path,
                                                 form: tuple[tuple[str, ...], tuple[str, ...]]):
    passed, args = form
    assert args[:2] == ("--keyspaces", REGION)  # the region signed for is the endpoint's
    env: dict[str, str] = {}
    for item in passed:
        if item.startswith("AWS_"):  # -e NAME: the value from the caller's environment
            env[item] = {"AWS_ACCESS_KEY_ID": GOOD.access_key, "AWS_SECRET_ACCESS_KEY": GOOD.secret,
                         "AWS_SESSION_TOKEN": ""}[item]
        elif item.endswith(":/home/cqlsh/.aws:ro"):  # ~/.aws mounted as the container's ~/.aws
            aws = tmp_path / ".aws"
            aws.mkdir()
            (aws / "credentials").write_text(f"[dev]\naws_access_key_id = {PROFILE.access_key}\n"
                                             f"aws_secret_access_key = {PROFILE.secret}\n")
            env["AWS_SHARED_CREDENTIALS_FILE"] = str(aws / "credentials")
            env["AWS_CONFIG_FILE"] = str(aws / "config")
    env = {k: v for k, v in env.items() if v}
    ep = keyspaces_endpoint
    proc = ep.run([*args, ep.host, str(ep.tls_port), "--certfile", str(ep.ca_file), "-e", QUERY],
                  tmp_path, env=ep.env(tmp_path, **env))
    assert proc.returncode == 0, proc.stderr
    assert "user-1" in proc.stdout and "(1 rows)" in proc.stdout
    assert not [secret for secret in ALL_SECRETS if secret in proc.stdout + proc.stderr]
