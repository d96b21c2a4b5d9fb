#!/usr/bin/env bash
# Installs the Debian packages hwgym needs, only those missing. Uses sudo when not root.
# Usage: scripts/install-deps.sh [--check]   (--check: list what is missing, install nothing)
# HWGYM_DEPS_STAMP=FILE: touch FILE once every package is installed (tests/python/test_fresh.py).
set -euo pipefail
stamp() { [ -z "${HWGYM_DEPS_STAMP:-}" ] || touch "$HWGYM_DEPS_STAMP"; }
PKGS=(build-essential pkg-config libzmq3-dev libmsgpack-dev libsqlite3-dev sqlite3 libcriterion-dev
      libopenblas-dev liblapacke-dev libgsl-dev libnlopt-dev libjansson-dev libyaml-dev libssl-dev
      python3 python3-zmq python3-msgpack python3-numpy
      python3-pip python3-setuptools python3-wheel mypy
      slurm-wlm munge iproute2 xz-utils chromium)
# One dpkg-query for every package (it exits 1 when one is unknown to dpkg, hence || true).
installed=$(dpkg-query -W -f='${Package}\t${Status}\n' "${PKGS[@]}" 2>/dev/null \
            | awk -F'\t' '$2 == "install ok installed" { print $1 }') || true
missing=()
for p in "${PKGS[@]}"; do
  grep -qxF "$p" <<< "$installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  stamp; exit 0
fi
if [ "${1:-}" = "--check" ]; then
  echo "missing: ${missing[*]}"; exit 1
fi
echo "install-deps: installing ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" != "0" ]; then
  command -v sudo >/dev/null || { echo "install-deps: not root and no sudo; install: ${missing[*]}" >&2; exit 1; }
  SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
stamp
