#!/usr/bin/env bash
# Makes sure Debian's PostgreSQL server binaries are installed (/usr/lib/postgresql/<version>/bin/initdb), for the
# PostgreSQL tests (test/support/postgres.ts starts a throwaway server from them). Does nothing when they are
# there; otherwise installs the `postgresql` package with apt-get (through sudo when not root and sudo exists).
# Debian's package also starts a cluster service; the tests do not use it, and this script stops it again.
# The tests skip themselves with a notice when the binaries are missing, unless AGENTAUTH_REQUIRE_POSTGRES=1 (CI).
set -euo pipefail

if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  echo "ensure-postgres: $(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1) is installed; nothing to do."
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-postgres: PostgreSQL is missing and apt-get is not available here." >&2
  echo "ensure-postgres: install PostgreSQL so that /usr/lib/postgresql/<version>/bin/initdb exists," >&2
  echo "ensure-postgres: or set AGENTAUTH_TEST_DATABASE_URL to a server the tests may create databases on." >&2
  exit 1
fi

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo)
  else
    echo "ensure-postgres: PostgreSQL is missing; installing it needs root, and sudo is not available." >&2
    echo "ensure-postgres: as root run: apt-get update && apt-get install -y postgresql" >&2
    exit 1
  fi
fi

echo "ensure-postgres: installing Debian's postgresql package (apt-get)..."
"${SUDO[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq postgresql >/dev/null
# The package's own cluster is not used by the tests; do not leave it running.
if command -v pg_ctlcluster >/dev/null 2>&1; then
  for cluster in /etc/postgresql/*/main; do
    [ -d "$cluster" ] || continue
    version="$(basename "$(dirname "$cluster")")"
    "${SUDO[@]}" pg_ctlcluster "$version" main stop >/dev/null 2>&1 || true
  done
fi
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  echo "ensure-postgres: the install finished but no /usr/lib/postgresql/*/bin/initdb exists." >&2
  exit 1
fi
echo "ensure-postgres: installed $(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)."
