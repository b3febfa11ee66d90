"""The native core's PEP 517 build backend: maturin's, run only with the Rust the user installed.

maturin's backend, finding no cargo on PATH, downloads rustup and a Rust toolchain into the user's
cache (puccinialin) and builds with it, unasked. Here a build without cargo stops first, in one
line that says how to get the core: Rust 1.85 or later, or the prebuilt wheel `bin/wheels` makes.
MATURIN_NO_INSTALL_RUST is set for maturin's own hooks too (it is the only switch maturin 1.16
has: no pyproject.toml setting), so no path through them downloads a toolchain.
"""

from __future__ import annotations

import os
import shutil
import sys
from typing import Any

os.environ["MATURIN_NO_INSTALL_RUST"] = "1"

import maturin  # noqa: E402  (after the switch above: its hooks read it when called)

NO_CARGO = (
    "cqlsh-ext-native: no cargo on PATH, and no Rust is downloaded: build the native core with "
    "Rust 1.85 or later (Debian 12: apt install rustc-web cargo-web), or install its prebuilt "
    "wheel (bin/wheels; README, Install)"
)


def _cargo_or_stop() -> None:
    if shutil.which("cargo") is None:
        print(NO_CARGO, file=sys.stderr)
        raise SystemExit(1)


def get_requires_for_build_wheel(config_settings: Any = None) -> list[str]:
    _cargo_or_stop()
    return maturin.get_requires_for_build_wheel(config_settings)


def get_requires_for_build_editable(config_settings: Any = None) -> list[str]:
    _cargo_or_stop()
    return maturin.get_requires_for_build_editable(config_settings)


def get_requires_for_build_sdist(config_settings: Any = None) -> list[str]:
    _cargo_or_stop()
    return maturin.get_requires_for_build_sdist(config_settings)


def prepare_metadata_for_build_wheel(metadata_directory: str, config_settings: Any = None) -> str:
    _cargo_or_stop()
    return maturin.prepare_metadata_for_build_wheel(metadata_directory, config_settings)


def prepare_metadata_for_build_editable(metadata_directory: str, config_settings: Any = None) -> str:
    _cargo_or_stop()
    return maturin.prepare_metadata_for_build_editable(metadata_directory, config_settings)


def build_wheel(wheel_directory: str, config_settings: Any = None,
                metadata_directory: str | None = None) -> str:
    _cargo_or_stop()
    return maturin.build_wheel(wheel_directory, config_settings, metadata_directory)


def build_editable(wheel_directory: str, config_settings: Any = None,
                   metadata_directory: str | None = None) -> str:
    _cargo_or_stop()
    return maturin.build_editable(wheel_directory, config_settings, metadata_directory)


def build_sdist(sdist_directory: str, config_settings: Any = None) -> str:
    _cargo_or_stop()
    return maturin.build_sdist(sdist_directory, config_settings)
