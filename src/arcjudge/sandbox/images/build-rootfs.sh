#!/usr/bin/env bash
# Build the arcjudge runtime image (arcjudge-runtime:v1-<hash>) WITHOUT any container
# registry: debootstrap a minimal Debian root file system from the Debian mirror this
# machine's apt already uses, strip it, add the unprivileged user `sandbox` (uid/gid 65532)
# and `docker import` it.
#
# Usage:
#   images/build-rootfs.sh               build if missing; print the image reference on stdout
#   images/build-rootfs.sh --print-tag   only print the image reference (needs neither root nor docker)
#   images/build-rootfs.sh --force       rebuild even if the image already exists
#
# Only the image reference (e.g. arcjudge-runtime:v1-0123456789ab) goes to stdout; progress
# goes to stderr, so CI can do:  IMAGE=$(bash images/build-rootfs.sh)
#
# Needs: root, debootstrap, docker (a running daemon), tar, flock, sha256sum.
# Environment overrides (default: read from this machine's apt sources):
#   ARCJUDGE_DEBIAN_SUITE            e.g. bookworm
#   ARCJUDGE_DEBIAN_MIRROR           e.g. the URI of the main Debian archive in /etc/apt/sources.list*
#   ARCJUDGE_DEBIAN_SECURITY_MIRROR  URI of <suite>-security; empty string = no security suite
#   ARCJUDGE_IMAGE_REPO              image repository name (default arcjudge-runtime)
#   TMPDIR                           where the temporary root file system is built (default /var/tmp)
#
# Tag scheme (the docker backend can recompute it; see images/README.md):
#   manifest = sha256sum-style lines "<sha256 hex>  <name>\n" for Dockerfile, build-rootfs.sh,
#              packages.txt (in that order), then "suite=<suite>\n" and "arch=<dpkg arch>\n"
#   tag      = "v1-" + first 12 hex digits of sha256(manifest)
set -euo pipefail

log() { printf '[build-rootfs] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_name=${ARCJUDGE_IMAGE_REPO:-arcjudge-runtime}
tag_files=(Dockerfile build-rootfs.sh packages.txt)

mode=build
force=0
for arg in "$@"; do
    case "$arg" in
        --print-tag) mode=print ;;
        --force) force=1 ;;
        -h|--help) sed -n '2,27p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument: $arg (try --help)" ;;
    esac
done

# --- inputs ---------------------------------------------------------------------------------

for f in "${tag_files[@]}"; do
    [[ -f "$here/$f" ]] || die "missing $here/$f"
done
mapfile -t packages < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' "$here/packages.txt" | grep -v '^$')
(( ${#packages[@]} > 0 )) || die "packages.txt lists no package"

arch=$(dpkg --print-architecture 2>/dev/null || true)
[[ -n "$arch" ]] || die "dpkg --print-architecture failed: this script needs a Debian-based host"

# Suite and mirrors: from the index targets apt would fetch (works for one-line and deb822
# sources), unless overridden. The base suite is the Debian "main" release without a dash.
targets=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 2>/dev/null | sort -u || true)
suite=${ARCJUDGE_DEBIAN_SUITE:-}
if [[ -z "$suite" ]]; then
    suite=$(awk '$2 ~ /^[a-z]+$/ && $1 !~ /security/ { print $2; exit }' <<<"$targets")
fi
[[ -n "$suite" ]] || die "cannot tell the Debian suite from apt's sources; set ARCJUDGE_DEBIAN_SUITE"
mirror=${ARCJUDGE_DEBIAN_MIRROR:-}
if [[ -z "$mirror" ]]; then
    mirror=$(awk -v s="$suite" '$2 == s && $1 !~ /security/ { print $1; exit }' <<<"$targets")
fi
[[ -n "$mirror" ]] || die "no apt source for suite '$suite'; set ARCJUDGE_DEBIAN_MIRROR"
if [[ -n "${ARCJUDGE_DEBIAN_SECURITY_MIRROR+set}" ]]; then
    security_mirror=$ARCJUDGE_DEBIAN_SECURITY_MIRROR
else
    security_mirror=$(awk -v s="$suite-security" '$2 == s { print $1; exit }' <<<"$targets")
fi
has_updates=0
if [[ -z "${ARCJUDGE_DEBIAN_MIRROR:-}" ]] \
    && awk -v s="$suite-updates" '$2 == s { f = 1 } END { exit !f }' <<<"$targets"; then
    has_updates=1
fi

manifest=$(
    cd "$here"
    sha256sum "${tag_files[@]}"
    printf 'suite=%s\narch=%s\n' "$suite" "$arch"
)
tag="v1-$(printf '%s\n' "$manifest" | sha256sum | cut -c1-12)"
image="$repo_name:$tag"

if [[ "$mode" == print ]]; then
    printf '%s\n' "$image"
    exit 0
fi

# --- preconditions --------------------------------------------------------------------------

command -v docker >/dev/null || die "docker CLI not found"
docker info >/dev/null 2>&1 || die "docker daemon not reachable (is dockerd running?)"

exists() { docker image inspect "$image" >/dev/null 2>&1; }
if (( ! force )) && exists; then
    log "$image already exists; nothing to do"
    printf '%s\n' "$image"
    exit 0
fi

[[ "$(id -u)" == 0 ]] || die "debootstrap needs root"
command -v debootstrap >/dev/null || die "debootstrap not found (apt-get install -y debootstrap)"
[[ -e "/usr/share/debootstrap/scripts/$suite" ]] || die "this debootstrap does not know suite '$suite'"

# One build at a time on this machine (parallel CI jobs): wait, then re-check.
lock=${TMPDIR:-/var/tmp}/arcjudge-runtime-build.lock
exec 9>"$lock"
if ! flock -n 9; then
    log "another build holds $lock; waiting"
    flock 9
fi
if (( ! force )) && exists; then
    log "$image was built meanwhile; nothing to do"
    printf '%s\n' "$image"
    exit 0
fi

# --- build ----------------------------------------------------------------------------------

root=$(mktemp -d "${TMPDIR:-/var/tmp}/arcjudge-rootfs.XXXXXX")
child=
# Long steps run in their own process group and are waited for, so that a SIGINT/SIGTERM to
# this script is handled at once (bash defers traps while a foreground child runs) and the
# whole step (debootstrap, dpkg, apt...) is killed before the root is removed.
run() {
    setsid "$@" &
    child=$!
    local rc=0
    wait "$child" || rc=$?
    child=
    return "$rc"
}
cleanup() {
    local rc=$? m
    set +e
    if [[ -n "$child" ]]; then
        kill -TERM -- "-$child" 2>/dev/null
        sleep 1
        kill -KILL -- "-$child" 2>/dev/null
        wait "$child" 2>/dev/null
    fi
    # Unmount whatever debootstrap or a failed step left mounted inside, deepest first,
    # so rm never walks into a live /proc or /sys.
    while read -r m; do
        umount -l "$m" 2>/dev/null
    done < <(awk -v r="$root" '$5 == r || index($5, r "/") == 1 { print $5 }' /proc/self/mountinfo | sort -r)
    rm -rf --one-file-system "$root"
    (( rc == 0 )) || log "failed (exit $rc); removed $root"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

started=$SECONDS
log "building $image: suite=$suite arch=$arch mirror=$mirror security=${security_mirror:-none}"
log "packages: ${packages[*]}"

include=$(IFS=,; echo "${packages[*]}")
run debootstrap --variant=minbase --arch="$arch" --include="$include" "$suite" "$root" "$mirror" >&2

in_root=(chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8
    DEBIAN_FRONTEND=noninteractive)

# Same package state as `debian:<suite>-slim` + apt-get install: pull in -updates and
# -security too, no recommends, no docs on later installs.
{
    echo "deb $mirror $suite main"
    if (( has_updates )); then echo "deb $mirror $suite-updates main"; fi
    if [[ -n "$security_mirror" ]]; then echo "deb $security_mirror $suite-security main"; fi
} > "$root/etc/apt/sources.list"
cat > "$root/etc/apt/apt.conf.d/90arcjudge" <<'EOF'
APT::Install-Recommends "false";
APT::Install-Suggests "false";
EOF
cat > "$root/etc/dpkg/dpkg.cfg.d/90arcjudge-nodoc" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/locale/*
EOF
printf '#!/bin/sh\nexit 101\n' > "$root/usr/sbin/policy-rc.d"
chmod 755 "$root/usr/sbin/policy-rc.d"
# (APT::Sandbox::User=root: no _apt user downloads in a chroot; Dpkg::Use-Pty=0: no /dev/pts here)
chroot_apt=(apt-get -q -o APT::Sandbox::User=root -o Dpkg::Use-Pty=0)
run "${in_root[@]}" "${chroot_apt[@]}" update >&2
run "${in_root[@]}" "${chroot_apt[@]}" -y upgrade >&2
"${in_root[@]}" "${chroot_apt[@]}" clean
rm -f "$root/usr/sbin/policy-rc.d"

"${in_root[@]}" groupadd -K GID_MAX=65535 --gid 65532 sandbox
"${in_root[@]}" useradd -K UID_MAX=65535 --uid 65532 --gid 65532 --home-dir /tmp --no-create-home \
    --shell /usr/sbin/nologin sandbox

# Smoke test before importing.
"${in_root[@]}" python3 -c 'import numpy, scipy, scipy.ndimage, matplotlib' \
    || die "python3 cannot import numpy/scipy/matplotlib in the new root"

# Strip caches, docs, man pages and host traces (__pycache__ stays: the root is read-only
# at run time, so byte code must be compiled now).
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/* "$root"/var/cache/debconf/*-old \
    "$root"/var/lib/dpkg/*-old "$root"/usr/share/man/* "$root"/usr/share/info/* \
    "$root"/usr/share/lintian/* "$root"/usr/share/locale/* "$root"/tmp/* "$root"/var/tmp/* \
    "$root"/root/.bash_history "$root"/etc/hostname
find "$root/usr/share/doc" -mindepth 1 ! -type d ! -name copyright -delete
find "$root/usr/share/doc" -mindepth 1 -type d -empty -delete
find "$root/var/log" -type f -exec truncate -s 0 {} +
: > "$root/etc/resolv.conf"  # docker mounts its own; do not ship the build host's
: > "$root/etc/machine-id"
rm -rf "${root:?}"/dev/* "${root:?}"/proc/* "${root:?}"/sys/* "${root:?}"/run/*

log "root file system: $(du -sh --one-file-system "$root" | cut -f1); importing"
tar -C "$root" --numeric-owner --one-file-system -cf - . | docker import \
    --change 'USER 65532' \
    --change 'WORKDIR /tmp' \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' \
    --change 'ENV HOME=/tmp' \
    --change 'ENV MPLCONFIGDIR=/tmp/matplotlib' \
    --change 'ENV MPLBACKEND=Agg' \
    --change 'ENV PYTHONDONTWRITEBYTECODE=1' \
    --change 'CMD ["python3"]' \
    --change "LABEL io.arcjudge.runtime.tag=$tag io.arcjudge.runtime.suite=$suite io.arcjudge.runtime.builder=build-rootfs.sh" \
    --message "arcjudge runtime $tag ($suite, debootstrap)" \
    - "$image" >&2

docker run --rm --network none "$image" \
    python3 -c 'import numpy, scipy, matplotlib.pyplot' >&2 \
    || { docker image rm "$image" >/dev/null 2>&1; die "smoke test of $image failed; image removed"; }

log "built $image in $((SECONDS - started)) s"
printf '%s\n' "$image"
