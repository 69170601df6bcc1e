#!/bin/sh
# Build a minimal Debian base image with python3, fully offline from a registry.
#
#   usage: build-base.sh [TAG] [SUITE]
#   defaults: TAG=debatecode/base-bookworm:latest SUITE=bookworm
#
# The Debian mirror is read from the host's apt configuration
# (/etc/apt/sources.list.d/*.sources, then /etc/apt/sources.list), never
# hard-coded; set DEBATECODE_DEBIAN_MIRROR to override it. Needs root,
# debootstrap and a running Docker engine. Takes about a minute.
set -eu

TAG=${1:-debatecode/base-bookworm:latest}
SUITE=${2:-bookworm}

die() {
    echo "build-base.sh: $*" >&2
    exit 2
}

[ "$(id -u)" = 0 ] || die "must run as root (debootstrap needs it); try: sudo $0 $*"
command -v debootstrap >/dev/null 2>&1 || die "debootstrap not found; install it: apt-get install -y debootstrap"
command -v docker >/dev/null 2>&1 || die "docker client not found"

mirror_from_deb822() {
    # First enabled "deb" stanza whose Suites list contains $SUITE.
    for file in /etc/apt/sources.list.d/*.sources; do
        [ -f "$file" ] || continue
        awk -v suite="$SUITE" '
            BEGIN { RS = ""; FS = "\n" }
            {
                types = ""; uris = ""; suites = ""; enabled = "yes"
                for (i = 1; i <= NF; i++) {
                    line = $i
                    if (line ~ /^[ \t]*#/) continue
                    if (line ~ /^Types:/)        { sub(/^Types:[ \t]*/, "", line); types = line }
                    else if (line ~ /^URIs:/)    { sub(/^URIs:[ \t]*/, "", line); uris = line }
                    else if (line ~ /^Suites:/)  { sub(/^Suites:[ \t]*/, "", line); suites = line }
                    else if (line ~ /^Enabled:/) { sub(/^Enabled:[ \t]*/, "", line); enabled = line }
                }
                if (enabled ~ /^no/ || types !~ /(^|[ \t])deb([ \t]|$)/) next
                n = split(suites, s, /[ \t]+/)
                for (j = 1; j <= n; j++) if (s[j] == suite) { split(uris, u, /[ \t]+/); print u[1]; exit }
            }' "$file"
    done | head -n 1
}

mirror_from_one_line() {
    [ -f /etc/apt/sources.list ] || return 0
    awk -v suite="$SUITE" '
        $1 == "deb" {
            i = 2
            if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
            if ($(i + 1) == suite) { print $i; exit }
        }' /etc/apt/sources.list
}

MIRROR=${DEBATECODE_DEBIAN_MIRROR:-}
[ -n "$MIRROR" ] || MIRROR=$(mirror_from_deb822)
[ -n "$MIRROR" ] || MIRROR=$(mirror_from_one_line)
[ -n "$MIRROR" ] || die "no Debian mirror for suite '$SUITE' in /etc/apt/sources.list.d/*.sources or /etc/apt/sources.list; set DEBATECODE_DEBIAN_MIRROR"

ROOTFS=$(mktemp -d "${TMPDIR:-/var/tmp}/debatecode-rootfs.XXXXXX")
trap 'rm -rf "$ROOTFS"' EXIT INT TERM

echo "build-base.sh: debootstrap $SUITE from $MIRROR into $ROOTFS"
debootstrap --variant=minbase --include=python3 "$SUITE" "$ROOTFS" "$MIRROR"

echo "build-base.sh: trimming the root filesystem"
chroot "$ROOTFS" apt-get clean >/dev/null 2>&1 || true
rm -rf "$ROOTFS"/var/lib/apt/lists/* "$ROOTFS"/var/cache/apt/* \
    "$ROOTFS"/usr/share/doc/* "$ROOTFS"/usr/share/man/* "$ROOTFS"/usr/share/info/*

echo "build-base.sh: importing as $TAG"
tar -C "$ROOTFS" -c . | docker import \
    --change 'ENV LANG=C.UTF-8' \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["python3"]' \
    - "$TAG"
echo "build-base.sh: done: $TAG"
