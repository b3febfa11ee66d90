# Shared by the tools/docker scripts (sourced, not run).
# shellcheck shell=bash

# The repository root.
# shellcheck disable=SC2034  # used by the scripts that source this file
DOCKER_TOOLS_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

# The tag of the locally made base image (tools/docker/base-image); the Dockerfile builds on it with
# --build-arg BASE_IMAGE=$CQLSH_EXT_BASE_IMAGE where no registry can be reached.
: "${CQLSH_EXT_BASE_IMAGE:=cqlsh-ext-base:bookworm}"

say() { printf '%s: %s\n' "$(basename "$0")" "$*" >&2; }
die() { say "ERROR: $*"; exit 1; }

need_root() {
  [ "$(id -u)" -eq 0 ] || die "must run as root (it installs packages / starts dockerd); try sudo $0"
}

# apt-get update at most once per hour: a second run stays fast.
apt_update_once() {
  local stamp=/var/lib/apt/periodic/cqlsh-ext-docker-update
  if [ -z "$(find "$stamp" -mmin -60 2>/dev/null)" ]; then
    apt-get update -q >/dev/null
    mkdir -p "$(dirname "$stamp")" && touch "$stamp"
  fi
}

# Install the named Debian packages that are not installed yet.
apt_install_missing() {
  local pkg missing=()
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'ok installed' || missing+=("$pkg")
  done
  [ "${#missing[@]}" -eq 0 ] && return 0
  say "installing ${missing[*]}"
  apt_update_once
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
}

# Seconds since the epoch (for the timings the scripts print).
now() { date +%s; }
