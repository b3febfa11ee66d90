# cqlsh-ext in a container: cqlsh 6.2.2 that shows what is inside compressed blobs.
#
#   docker build -t cqlsh-ext .
#   docker run --rm -it cqlsh-ext HOST 9042 -u USER -p PASSWORD
#   docker run --rm -it cqlsh-ext HOST 9042 -e "SELECT * FROM ks.t LIMIT 5"
#   docker run --rm -i cqlsh-ext mcp HOST 9042 -u USER -p PASSWORD    (an MCP server on stdio: docs/mcp.md)
#   docker run --rm -p 127.0.0.1:8765:8765 -e CQLSH_EXT_MCP_TOKEN cqlsh-ext mcp HOST 9042 \
#     --http 0.0.0.0:8765 --tls-cert ... --tls-key ...                   (over Streamable HTTP at /mcp)
#
# Amazon Keyspaces: AWS credentials come only from the run, never from the image; --keyspaces
# logs in with SigV4 unless -u is given (docs/docker.md). Either
#   docker run --rm -it -e AWS_ACCESS_KEY_ID -e AWS_SECRET_ACCESS_KEY -e AWS_SESSION_TOKEN \
#     cqlsh-ext --keyspaces us-east-1
# or a read-only mount of ~/.aws, with --profile to pick a profile (or -e AWS_PROFILE=dev):
#   docker run --rm -it -v "$HOME/.aws:/home/cqlsh/.aws:ro" \
#     cqlsh-ext --keyspaces us-east-1 --profile dev
# The shell runs as uid 10001. If your ~/.aws files are readable by you only (mode 600), add
# --user "$(id -u)": HOME stays /home/cqlsh, which any uid of group 0 may write.
#
# Build arguments:
#   BASE_IMAGE  a Debian-like image with Python >= 3.11 (python3 -m venv, useradd); both stages use
#               it. Default: the official Python slim image.
#   EXTRAS      optional extras of pyproject.toml to install: all (but the test ones and spark: parquet
#               and mcp), none, or a comma list.
#   VERSION     recorded in the image's labels.
# The build works with the classic builder and with BuildKit; it needs PyPI for the dependencies
# (locks/main.txt's versions), Debian's archive for Rust (rustc-web, cargo-web: 1.85 in bookworm)
# and crates.io for the native core's crates.

ARG BASE_IMAGE=python:3.11-slim-bookworm

# ---- native: the value engine's Rust core (native/), a wheel built with Debian's Rust ----
FROM ${BASE_IMAGE} AS native
LABEL org.cqlsh-ext.stage=native
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ROOT_USER_ACTION=ignore \
    CARGO_HOME=/opt/cargo \
    MATURIN_NO_INSTALL_RUST=1
# No zlib to link: the core inflates with the libz.so.1 Python's zlib module loads (native/core/src/libz.rs).
# maturin's pin: tools/build-requirements.txt.
COPY tools/build-requirements.txt /tmp/
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install --yes --no-install-recommends rustc-web cargo-web \
 && rm -rf /var/lib/apt/lists/* \
 && python3 -m venv /opt/maturin \
 && /opt/maturin/bin/pip install --constraint /tmp/build-requirements.txt maturin
WORKDIR /src/native
# The crates of the committed Cargo.lock first: this layer stays cached while only the source changes.
# The workspace's two crates (core/, bindings/): their manifests, with empty sources for the fetch.
COPY native/Cargo.toml native/Cargo.lock ./
COPY native/core/Cargo.toml ./core/
COPY native/bindings/Cargo.toml ./bindings/
COPY native/.cargo ./.cargo
RUN mkdir core/src bindings/src && touch core/src/lib.rs bindings/src/lib.rs && cargo fetch --locked \
 && rm -r core/src bindings/src
COPY native/ ./
RUN CARGO_NET_OFFLINE=true /opt/maturin/bin/maturin build --release --locked --compatibility linux \
      --out /wheels

# ---- build: make the wheel, install it and its dependencies into a virtualenv ----
FROM ${BASE_IMAGE} AS build
ARG EXTRAS=all
LABEL org.cqlsh-ext.stage=build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ROOT_USER_ACTION=ignore \
    PYTHONDONTWRITEBYTECODE=1
WORKDIR /src
RUN python3 -m venv /opt/cqlsh-ext
# The dependencies first, at the versions of locks/main.txt (what CI tests), each file checked against
# the lock's hashes: pyproject.toml's ranges for the extras asked (requirements.py), the lock as
# constraints, installed by uv (its pin: tools/build-requirements.txt; in the build stage only). This
# layer stays cached while only the source changes.
COPY pyproject.toml tools/docker/requirements.py tools/build-requirements.txt locks/main.txt ./
RUN python3 requirements.py "${EXTRAS}" > requirements.txt \
 && python3 -m venv /opt/uv \
 && /opt/uv/bin/pip install --constraint build-requirements.txt uv \
 && UV_NO_CACHE=1 /opt/uv/bin/uv pip install --python /opt/cqlsh-ext/bin/python --constraint main.txt \
      --requirement requirements.txt
COPY . .
COPY --from=native /wheels /native-wheels
# pyarrow ships its own test suite (about 10 MB, with conftest.py files), its C++ headers and sources,
# Arrow Flight and the S3 filesystem (about 50 MB, linked by nothing cqlsh-ext loads: pyarrow.fs
# names S3 unavailable) and two copies of libarrow_python under development names (only the soname is
# loaded): not for a runtime image, which writes Parquet and reads Arrow (170 MB of pyarrow 26 -> 104).
# The native core must configure itself from the registry it was built against.
RUN /opt/cqlsh-ext/bin/pip wheel --no-deps --wheel-dir /wheels . \
 && /opt/cqlsh-ext/bin/pip install --no-deps /wheels/cqlsh_ext-*.whl /native-wheels/cqlsh_ext_native-*.whl \
 && /opt/cqlsh-ext/bin/pip check \
 && /opt/cqlsh-ext/bin/cqlsh-ext --version \
 && /opt/cqlsh-ext/bin/python -c "from cqlsh_ext.payload import native as n; assert n.available(), n.refusal()" \
 && /opt/cqlsh-ext/bin/pip uninstall --yes --quiet pip setuptools \
 && for pa in /opt/cqlsh-ext/lib/python3*/site-packages/pyarrow; do \
      [ ! -d "$pa" ] || rm -rf "$pa"/tests "$pa"/conftest.py "$pa"/include "$pa"/src "$pa"/libarrow_flight.so* \
                               "$pa"/_flight.*.so "$pa"/libarrow_s3.so* "$pa"/_s3fs.*.so "$pa"/libarrow_python.so \
                               "$pa"/libarrow_python.so.*.*.*; \
    done \
 && /opt/cqlsh-ext/bin/python -c "import importlib.util as u; u.find_spec('pyarrow') is None or __import__('pyarrow.parquet')"

# ---- runtime: the base image, a non-root user and the virtualenv; no compiler, no source ----
FROM ${BASE_IMAGE}
ARG BASE_IMAGE
ARG VERSION=dev
LABEL org.opencontainers.image.title="cqlsh-ext" \
      org.opencontainers.image.description="cqlsh 6.2.2, extended: shows what is inside compressed blobs (snappy, LZ4, zstd, gzip, ...) for Apache Cassandra and Amazon Keyspaces" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.base.name="${BASE_IMAGE}"

# System CA certificates (TLS to Amazon Keyspaces verifies against them) and less (the shell's
# pager for long results): installed unless the base image has them already. The user's home is
# writable by group 0 too, for `--user "$(id -u)"`.
# hadolint ignore=DL3008,SC2086
RUN missing="" \
 && { [ -s /etc/ssl/certs/ca-certificates.crt ] || missing="ca-certificates"; } \
 && { command -v less >/dev/null || missing="$missing less"; } \
 && if [ -n "$missing" ]; then \
      apt-get update \
      && apt-get install --yes --no-install-recommends $missing \
      && apt-get clean \
      && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin; \
    fi \
 && useradd --no-log-init --uid 10001 --user-group --create-home --home-dir /home/cqlsh \
      --shell /bin/bash cqlsh \
 && chgrp 0 /home/cqlsh \
 && chmod 0775 /home/cqlsh

COPY --from=build /opt/cqlsh-ext /opt/cqlsh-ext

# CQLSH_EXT_IMAGE: a missing extra's hint says to build the image with it (pip is not in the image).
ENV PATH="/opt/cqlsh-ext/bin:${PATH}" \
    CQLSH_EXT_IMAGE=1 \
    HOME=/home/cqlsh \
    LANG=C.UTF-8 \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1
USER 10001:10001
WORKDIR /home/cqlsh
# cqlsh-ext mcp --http 0.0.0.0:8765 (docs/mcp.md: a token, and TLS or --private-network, off loopback)
EXPOSE 8765
ENTRYPOINT ["cqlsh-ext"]
CMD ["--help"]
