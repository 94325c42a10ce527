#!/usr/bin/env bash
# Runs the tests that exercise the sandbox again as an ordinary user, since
# that is who runs nash. Needs root (to create the user); CI runs as root.
#
#   NASH_TEST_USER   the user to create and run as (default nashci)
#   NASH_TEST_FLAGS  extra flags for the test binaries (e.g. -test.short)
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" != 0 ]; then
  echo "test-unprivileged: must run as root (it creates a user); skipping is not an option" >&2
  exit 1
fi
user=${NASH_TEST_USER:-nashci}
id "$user" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash "$user"
home=$(getent passwd "$user" | cut -d: -f6)
# A supplementary group, which /etc/subgid lets the user map into a user
# namespace with newgidmap (the uidmap package): the sandbox tests write in
# a setgid directory of that group (TestSupplementaryGroups).
team=${user}-team
getent group "$team" >/dev/null || groupadd "$team"
id -nG "$user" | tr ' ' '\n' | grep -qx "$team" || usermod -aG "$team" "$user"
teamgid=$(getent group "$team" | cut -d: -f3)
grep -qx "$user:$teamgid:1" /etc/subgid 2>/dev/null || echo "$user:$teamgid:1" >> /etc/subgid

dir=$(mktemp -d /tmp/nash-unprivileged.XXXXXX)
trap 'rm -rf "$dir"' EXIT
chmod 755 "$dir"

# Test binaries, and what they read, where the user can read them, laid
# out as in the repository (tests find ../../examples and testdata/).
# internal/doctor probes the machine as nash's user would (a clone into
# user namespaces, statfs, overlayfs).
# Every package but cmd/nash is built with the race detector; cmd/nash, whose
# end-to-end tests start hundreds of nash processes, without it (the root
# pass of make test already runs it under -race), to keep CI within time.
pkgs=(sandbox internal/sandboxnet internal/sockdiag internal/doctor scripttest cmd/nash)
for p in "${pkgs[@]}"; do
  name=${p//\//-}
  mkdir -p "$dir/$p"
  race=-race
  [ "$p" = cmd/nash ] && race=
  go test -c $race -o "$dir/$p/$name.test" "./$p"
  if [ -d "$p/testdata" ]; then cp -r "$p/testdata" "$dir/$p/"; fi
done
cp -r examples "$dir/"
# The data sets live in the repository (testdata/); the binaries run
# outside it, so they are told where with NASH_DATA.
mkdir -p "$dir/data"
cp -r testdata/. "$dir/data/"
chmod -R a+rX "$dir"

status=0
for p in "${pkgs[@]}"; do
  name=${p//\//-}
  echo "== $p as $user (uid $(id -u "$user"))"
  if ! (cd "$dir/$p" && setpriv --reuid "$user" --regid "$user" --init-groups \
      env -i HOME="$home" USER="$user" PATH="$PATH" TMPDIR=/tmp CI="${CI:-}" NASH_DATA="$dir/data" \
      "./$name.test" -test.timeout 40m ${NASH_TEST_FLAGS:-} 2>&1); then
    status=1
  fi
done
exit $status
