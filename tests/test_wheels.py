"""cqlsh-ext installed without Rust, as a user installs it: bin/wheels' pure wheel and the native
core's manylinux2014 wheel go into a clean virtualenv whose PATH has no cargo and no rustc, and the
shell there reads a gzip value on the core from the test Cassandra. The `native` extra pins the core
at cqlsh-ext's own version; a build of the core from source without cargo stops in one line and
downloads no Rust.
"""

from __future__ import annotations

import gzip
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import cqlsh_ext
from cqlsh_ext.payload.running import GET_THE_CORE

REPO = Path(__file__).resolve().parents[1]
#: A user's PATH with no Rust on it (rustup puts cargo and rustc in ~/.cargo/bin).
NO_RUST = "/usr/bin:/bin"
#: What the core's wheel may link: glibc's libraries and libgcc_s (the manylinux2014 policy's), no libz.
MANYLINUX_LIBS = {"libc.so.6", "libm.so.6", "libdl.so.2", "libpthread.so.0", "librt.so.1", "libgcc_s.so.1",
                  "ld-linux-x86-64.so.2"}


def _toml(path: Path) -> dict:
    import tomllib
    return tomllib.loads(path.read_text(encoding="utf-8"))


def _no_rust_env(home: Path) -> dict[str, str]:
    """The environment of a user without Rust: PATH without cargo or rustc, a HOME (and caches) of
    the test's own; pip keeps the machine's download cache."""
    left_out = ("CARGO", "RUSTUP", "CQLSH_", "CQL_", "VIRTUAL_ENV", "PYTHON", "MATURIN", "XDG_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(left_out)}
    pip_cache = subprocess.run([sys.executable, "-m", "pip", "cache", "dir"], capture_output=True, text=True,
                               check=True).stdout.strip()
    env.update(PATH=NO_RUST, HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"), PIP_CACHE_DIR=pip_cache,
               PIP_DISABLE_PIP_VERSION_CHECK="1")
    home.mkdir(parents=True, exist_ok=True)
    assert shutil.which("cargo", path=NO_RUST) is None and shutil.which("rustc", path=NO_RUST) is None
    return env


def test_the_native_extra_pins_the_core_at_cqlsh_ext_s_version() -> None:
    project = _toml(REPO / "pyproject.toml")["project"]
    version = project["version"]
    assert project["optional-dependencies"]["native"] == [f"cqlsh-ext-native=={version}"]
    # the core's wheel takes its version from the Cargo workspace (maturin: dynamic version)
    assert "version" in _toml(REPO / "native" / "pyproject.toml")["project"]["dynamic"]
    assert _toml(REPO / "native" / "Cargo.toml")["workspace"]["package"]["version"] == version
    assert cqlsh_ext.__version__ == version


def test_building_the_core_without_cargo_stops_in_one_line_and_downloads_no_rust(tmp_path: Path) -> None:
    # The README's command for the core from source, by a user without Rust: pip builds it in an
    # isolated environment with maturin from PyPI, whose backend would download rustup and Rust.
    env = _no_rust_env(tmp_path / "home")
    run = subprocess.run([sys.executable, "-m", "pip", "install", "--target", str(tmp_path / "site"),
                          str(REPO / "native")], env=env, capture_output=True, text=True, timeout=600)
    said = run.stdout + run.stderr
    assert run.returncode != 0, said
    ours = [line.strip() for line in said.splitlines() if "cqlsh-ext-native:" in line]
    assert ours == [
        "cqlsh-ext-native: no cargo on PATH, and no Rust is downloaded: build the native core with Rust 1.85 "
        "or later (Debian 12: apt install rustc-web cargo-web), or install its prebuilt wheel (bin/wheels; "
        "README, Install)"], said
    assert "installing into a temporary directory" not in said and "puccinialin" not in said, said
    assert not (tmp_path / "home" / ".cache" / "puccinialin").exists()
    assert not (tmp_path / "site").exists()


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What bin/wheels builds, once a session (cargo keeps its build in native/target/manylinux: with
    the sources unchanged a second session only packs the wheel again)."""
    if shutil.which("cargo") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true and no cargo: bin/wheels cannot build the native core's wheel")
        pytest.skip("no cargo: bin/wheels builds the native core's wheel with Rust 1.85+")
    out = tmp_path_factory.mktemp("dist")
    run = subprocess.run([str(REPO / "bin" / "wheels"), "--out", str(out)], capture_output=True, text=True,
                         timeout=3600)
    assert run.returncode == 0, run.stderr[-4000:]
    return out


def _one(directory: Path, pattern: str) -> Path:
    (found,) = directory.glob(pattern)
    return found


def _built_for_manylinux2014(wheelhouse: Path) -> None:
    """bin/wheels built the pure wheel, its sdist, the core's manylinux2014 wheel and its sdist, and
    the core's module links nothing the policy forbids."""
    version = cqlsh_ext.__version__
    names = sorted(path.name for path in wheelhouse.iterdir())
    assert names == sorted([f"cqlsh_ext-{version}-py3-none-any.whl", f"cqlsh_ext-{version}.tar.gz",
                            f"cqlsh_ext_native-{version}-cp310-abi3-manylinux2014_x86_64.manylinux_2_17_x86_64.whl",
                            f"cqlsh_ext_native-{version}.tar.gz"])
    core = _one(wheelhouse, "cqlsh_ext_native-*.whl")
    with zipfile.ZipFile(core) as wheel:
        (module,) = [name for name in wheel.namelist() if name.endswith(".so")]
        elf = wheel.read(module)
        # the notices of what the module holds (ours, libzstd, liblz4, libdeflate), as pip sees them
        info = f"cqlsh_ext_native-{version}.dist-info"
        metadata = wheel.read(f"{info}/METADATA").decode()
        notices = re.findall(r"^License-File: (.+)$", metadata, re.MULTILINE)
        # what native/pyproject.toml declares (tests/test_license.py holds the declaration)
        assert notices == _toml(REPO / "native" / "pyproject.toml")["project"]["license-files"]
        for notice in notices:
            assert wheel.read(f"{info}/licenses/{notice}") == (REPO / "native" / notice).read_bytes(), notice
    assert elf[:4] == b"\x7fELF" and int.from_bytes(elf[18:20], "little") == 62  # EM_X86_64
    (wheelhouse / "module.so").write_bytes(elf)
    try:
        dynamic = subprocess.run(["readelf", "--dynamic", str(wheelhouse / "module.so")], capture_output=True,
                                 text=True, check=True).stdout
    finally:
        (wheelhouse / "module.so").unlink()
    needed = set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic))
    assert needed and needed <= MANYLINUX_LIBS, needed  # no libz: the core finds CPython's at run time


def _version(venv: Path, env: dict[str, str]) -> str:
    run = subprocess.run([str(venv / "bin" / "cqlsh-ext"), "--version"], env=env, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    return run.stdout


def test_the_wheels_install_without_rust_and_read_gzip_on_the_core(wheelhouse: Path, cassandra,
                                                                    tmp_path: Path) -> None:
    # (one test: bin/test --fast, which starts no server, builds no wheel either)
    _built_for_manylinux2014(wheelhouse)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=600)
    env = _no_rust_env(tmp_path / "home")
    env["PATH"] = f"{venv / 'bin'}:{NO_RUST}"
    # README's Install: both files named, the dependencies from the index
    pure = _one(wheelhouse, "cqlsh_ext-*.whl")
    core = _one(wheelhouse, "cqlsh_ext_native-*.whl")
    install = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-vv",
                              f"{pure}[native]", str(core)],
                             env=env, capture_output=True, text=True, timeout=1800)
    assert install.returncode == 0, install.stderr[-4000:]
    # No index was asked for either name: pip -vv names each index page it reads (the
    # dependencies' here; with `--find-links dist 'cqlsh-ext[native]'` .../simple/cqlsh-ext/ too).
    assert "/simple/cqlsh/" in install.stdout
    assert "/simple/cqlsh-ext/" not in install.stdout and "/simple/cqlsh-ext-native/" not in install.stdout
    # The manual page comes with it (pyproject.toml's data-files), where man finds it from PATH.
    installed = venv / "share" / "man" / "man1" / "cqlsh-ext.1"
    assert installed.read_text() == (REPO / "man" / "cqlsh-ext.1").read_text()
    if shutil.which("man") is not None:
        on_path = {**env, "PATH": f"{venv / 'bin'}:/usr/bin:/bin"}
        found = subprocess.run(["man", "-w", "cqlsh-ext"], env=on_path, capture_output=True, text=True,
                               timeout=60)
        assert Path(found.stdout.strip()).resolve() == installed.resolve(), (found.stdout, found.stderr)
    # So do the guides the texts point to (`cqlsh-ext docs edit`): a pip user has no docs/ directory.
    shown = subprocess.run([str(venv / "bin" / "cqlsh-ext"), "docs", "edit"], env={**env, "COLUMNS": "80"},
                           capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == _checkout_s_guide("edit"), shown.stdout[:2000]
    lines = _version(venv, env).splitlines()
    assert "value engine: native" in lines
    reads = next(line for line in lines if line.startswith("native core reads: "))
    read = reads.removeprefix("native core reads: ").split("; ")[0].split(", ")
    assert {"gzip", "zlib", "zstd", "snappy", "lz4/frame"} <= set(read), reads

    keyspace = cassandra.create_keyspace("wheels")
    session = cassandra.session(keyspace)
    session.execute("CREATE TABLE docs (id int PRIMARY KEY, data blob)")
    session.execute("INSERT INTO docs (id, data) VALUES (1, %s)",
                    (gzip.compress(b'{"order": 7, "ok": true}'),))
    session.shutdown()
    shell = subprocess.run([str(venv / "bin" / "cqlsh-ext"), *cassandra.cqlsh_args, "-e",
                            f"SELECT id, data FROM {keyspace}.docs"], env=env, capture_output=True, text=True,
                           timeout=300)
    assert shell.returncode == 0, shell.stderr
    assert '  1 | [gzip] {"order": 7, "ok": true}' in shell.stdout.splitlines(), shell.stdout

    # without the core: the Python engine, and --version says how to get the core
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "uninstall", "--yes", "cqlsh-ext-native"],
                   env=env, capture_output=True, check=True, timeout=300)
    assert f"value engine: python ({GET_THE_CORE})" in _version(venv, env).splitlines()


def _checkout_s_guide(topic: str) -> str:
    """`cqlsh-ext docs TOPIC` of this checkout at 80 columns: the guide an installed copy shows the same."""
    from shell_runner import CQLSH_EXT

    return subprocess.run([CQLSH_EXT, "docs", topic], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "COLUMNS": "80"}, check=True).stdout
