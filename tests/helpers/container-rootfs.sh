#!/usr/bin/env bash
# Builds, once per machine, the Debian root that tests/system/systemd-node.test.ts boots with
# systemd-nspawn, and prints its path. The test copies it to a throwaway directory for each run,
# so runs never share state; this cache is only ever read after it was built.
# Needs root, debootstrap and the network (deb.debian.org) the first time only.
# Exit codes: 0 ready (path on stdout), 1 could not build it.
set -euo pipefail

# Bump the key whenever the packages or the changes below change: a new key builds a new root.
readonly SUITE=bookworm
readonly KEY=bookworm-minbase-systemd-1
readonly CACHE=${QF_ROOTFS_CACHE:-/var/tmp/queen-fleet-rootfs}
readonly ROOT=$CACHE/$KEY
readonly MIRROR=${QF_DEBIAN_MIRROR:-http://deb.debian.org/debian}

# Only a finished build is ever renamed to $ROOT, so its presence means it is complete.
if [[ -d $ROOT ]]; then
  echo "$ROOT"
  exit 0
fi
if ((EUID != 0)); then
  echo "container-rootfs.sh: root is needed to build $ROOT" >&2
  exit 1
fi
if ! command -v debootstrap >/dev/null; then
  echo "container-rootfs.sh: debootstrap is not installed (apt-get install -y debootstrap)" >&2
  exit 1
fi

mkdir -p -- "$CACHE"
BUILD=$(mktemp -d "$CACHE/.build-$KEY.XXXXXX")
trap 'rm -rf -- "$BUILD"' EXIT
echo "container-rootfs.sh: debootstrap $SUITE into $BUILD (first run only; a few minutes)" >&2
debootstrap --variant=minbase --include=systemd,systemd-sysv,dbus "$SUITE" "$BUILD/root" "$MIRROR" >&2

r=$BUILD/root
echo queen-fleet-node >"$r/etc/hostname"
# Timers that would run apt or fstrim in the middle of a timed test: the node's services are
# what is under test, not Debian's housekeeping.
for unit in apt-daily.timer apt-daily-upgrade.timer dpkg-db-backup.timer fstrim.timer; do
  ln -sfn /dev/null "$r/etc/systemd/system/$unit"
done
# Every run copies this tree: what no test reads is left out.
rm -rf -- "$r"/var/cache/apt/archives/*.deb "$r"/var/lib/apt/lists/* "$r"/usr/share/doc/* "$r"/usr/share/man/* "$r"/usr/share/locale/* "$r"/usr/share/info/*

mv -T -- "$r" "$ROOT"
echo "$ROOT"
