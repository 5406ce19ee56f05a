#!/usr/bin/env bash
# Another DPDK release, from Debian's packages, in a root of its own: the
# machine keeps its own DPDK (bookworm: 22.11), and 24.11 (trixie) or 25.11
# (sid), which need a newer glibc, never touch it.
#
# Usage:
#   scripts/dpdk-root.sh root VERSION        make the root once (reused while it
#                                            has every package below; missing
#                                            ones are added); prints its path
#   scripts/dpdk-root.sh run VERSION CMD...  run CMD in the root, in this tree
#                                            (bind-mounted at the same path), with
#                                            the machine's Rust toolchain, in a
#                                            mount namespace of its own: nothing
#                                            stays mounted after CMD, even if it
#                                            crashes
#   scripts/dpdk-root.sh exec VERSION CMD... the same, but CMD sees the tree as
#                                            the machine does (target/ itself,
#                                            with the mounts under it, such as a
#                                            hugetlbfs) and shares /run/dpdk: a
#                                            program of this release driven from
#                                            the machine (l3fwd-bench --dpdk); CMD
#                                            takes this process's place (its pid,
#                                            its signals)
#
# VERSION: 24.11 or 25.11. Roots live in target/dpdk-root/VERSION (about
# 1.5 GB each, ~4 minutes to make); their builds in target/dpdk-VERSION,
# which CMD sees as target/ under `run`.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# What building and testing l3fwd-rs needs in a root...
PACKAGES="ca-certificates pkgconf gcc g++ libc6-dev make dpdk dpdk-dev libdpdk-dev dpdk-doc libpcap-dev libclang-dev clang iproute2 ethtool procps python3"
# and what the Makefile's targets need besides (its DEBS, passed by make).
PACKAGES="$PACKAGES ${DPDK_ROOT_PACKAGES:-}"
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}

die() { echo "dpdk-root: $*" >&2; exit 1; }

suite_of() {
    case "$1" in
    24.11) echo trixie ;;
    25.11) echo sid ;;
    *) die "no Debian suite known for DPDK $1 (known: 24.11 trixie, 25.11 sid); the machine's own is $(pkg-config --modversion libdpdk 2>/dev/null || echo none)" ;;
    esac
}

make_root() {
    local version=$1 suite root stamp
    suite=$(suite_of "$version")
    root="$HERE/target/dpdk-root/$version"
    # Written once debootstrap made the root: its suite.
    stamp="$root/.l3fwd-rs-root"
    if ready; then
        echo "$root"
        return
    fi
    [[ $(id -u) == 0 ]] || die "making a root needs root (debootstrap, chroot)"
    command -v debootstrap >/dev/null || {
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
    }
    mkdir -p "$HERE/target/dpdk-root"
    # One maker at a time (test binaries and make targets may race).
    exec 8>"$HERE/target/dpdk-root/.$version.lock"
    flock 8
    if ready; then
        echo "$root"
        return
    fi
    if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$suite" ]]; then
        echo "dpdk-root: making a Debian $suite root for DPDK $version in $root (~4 min)" >&2
        rm -rf "$root"
        debootstrap --variant=minbase --include=pkgconf,gcc,libc6-dev,make "$suite" "$root" "$MIRROR" >&2 ||
            die "debootstrap $suite failed (see above)"
        echo "$suite" >"$stamp"
    fi
    # sid's Release file can be past its validity on a machine whose mirror
    # is a snapshot; trixie's is checked as usual.
    local check=()
    [[ $suite == sid ]] && check=(-o Acquire::Check-Valid-Until=false)
    in_root "$root" / apt-get "${check[@]}" update -qq >&2
    in_root "$root" / env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $PACKAGES >&2 ||
        die "apt-get install in the $suite root failed"
    in_root "$root" / apt-get clean
    local got
    got=$(in_root "$root" / pkg-config --modversion libdpdk)
    [[ $got == "$version".* || $got == "$version" ]] || die "the $suite root has DPDK $got, not $version"
    echo "$root"
}

# Whether the root was made and has every package.
ready() {
    [[ -f "$stamp" && "$(cat "$stamp")" == "$suite" ]] && chroot "$root" dpkg -s $PACKAGES >/dev/null 2>&1
}

# in_root ROOT DIR CMD...: CMD in ROOT with cwd DIR, in a private mount
# namespace (unshare), so every mount below goes when CMD ends. With
# HERE_BIND set, the tree is seen at its own path: as its release's build
# (target/dpdk-VERSION as target/) under VIEW=build, as the machine sees it
# under VIEW=machine. (root_command only sets ROOT_COMMAND to it: unshare,
# bash and chroot each exec the next, so that `exec "${ROOT_COMMAND[@]}"`
# runs CMD in this very process.)
in_root() {
    root_command "$@"
    "${ROOT_COMMAND[@]}"
}

root_command() {
    local root=$1 dir=$2
    shift 2
    ROOT_COMMAND=(unshare --mount --propagation private -- bash -euo pipefail -c '
        root=$1 dir=$2 here=$3 version=$4 view=$5; shift 5
        # The root a mount point of its own: ip netns exec remounts / (as
        # a slave), which only a mount point can be.
        mount --bind "$root" "$root"
        mount -t proc proc "$root/proc"
        mount --rbind /sys "$root/sys"
        mount --rbind /dev "$root/dev"
        # Its own /tmp and /run: DPDK runtime folders (/run/dpdk) and the
        # tests network namespaces (/run/netns) go with the namespace.
        mount -t tmpfs tmpfs "$root/tmp"
        mount -t tmpfs tmpfs "$root/run"
        mkdir -p "$root/run/dpdk" "$root/run/netns"
        if [[ $here != / ]]; then
            mkdir -p "$root$here" "$root/root/.cargo" "$root/root/.rustup"
            if [[ $view == machine ]]; then
                # target/ as it is, hugetlbfs mounts under it included, and
                # the machine'"'"'s DPDK runtime folders (telemetry sockets).
                mount --rbind "$here" "$root$here"
                mkdir -p /run/dpdk
                mount --bind /run/dpdk "$root/run/dpdk"
            else
                mkdir -p "$here/target/dpdk-$version"
                mount --bind "$here" "$root$here"
                # This release builds in target/dpdk-VERSION, seen as target/
                # in the root: every path under target/ (release/, c-l3fwd/,
                # bench/) is its own, and the roots themselves are out of sight.
                mount --bind "$here/target/dpdk-$version" "$root$here/target"
            fi
            [[ -d /root/.cargo ]] && mount --bind /root/.cargo "$root/root/.cargo"
            [[ -d /root/.rustup ]] && mount --bind /root/.rustup "$root/root/.rustup"
            # The certificates of the machine: cargo fetches through whatever
            # authority the machine trusts.
            mount --bind /etc/ssl/certs "$root/etc/ssl/certs"
        fi
        exec chroot "$root" /usr/bin/env -C "$dir" \
            PATH=/root/.cargo/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
            HOME=/root TERM="${TERM:-dumb}" "$@"
    ' in_root "$root" "$dir" "${HERE_BIND:-/}" "${ROOT_VERSION:-}" "${VIEW:-build}" "$@")
}

cmd=${1:-}
version=${2:-}
[[ -n $cmd && -n $version ]] || die "usage: $0 root|run|exec VERSION [CMD...]"
case "$cmd" in
root) make_root "$version" ;;
run | exec)
    shift 2
    root=$(make_root "$version")
    view=build
    [[ $cmd == exec ]] && view=machine
    HERE_BIND=$HERE ROOT_VERSION=$version VIEW=$view root_command "$root" "$PWD" env L3FWD_DPDK_ROOT="$version" "$@"
    exec "${ROOT_COMMAND[@]}"
    ;;
*) die "unknown command $cmd (root, run or exec)" ;;
esac
