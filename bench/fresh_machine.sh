#!/usr/bin/env bash
# Runs the README's command as a newcomer does: on a fresh Debian 12 with none of the project's
# packages, its compiler cache or its Python environments, from a clean clone of this
# repository's HEAD, at the slow machine's pace (bench/slow_machine.sh, default 2.5x slower
# under a CPU quota; --per-core: each core slowed, as there).
# The fresh machine is a Debian 12 root made in FOLDER with debootstrap and entered with chroot;
# it downloads its packages as a new machine does (this machine's apt mirrors, its CA
# certificates and its pip settings are copied in, nothing it installed).
#
#   bench/fresh_machine.sh [--slowdown X] [--period-ms MS] [--per-core] [--keep] FOLDER [COMMAND]
#
# COMMAND runs in the clone (default: ./oomlab.sh test). Then the phases are printed: the
# packages and configure, the build (ninja's first to last step), the suite (CTest's wall, the
# tests' times summed, those over 30 s), and the whole command's wall and CPU time; they stay in
# FOLDER/summary.txt beside the command's log, FOLDER/command.log. The fresh root is removed
# afterwards unless --keep. Needs root, Debian's mirror, and about 10 GB in FOLDER.
#
# What a chroot lacks that a machine has is given to it: / is a mount point (ip netns needs
# one), the cgroups are mounted (slurmd needs them), the host's name resolves (/etc/hosts).
# ../shared (the real data) is mounted read-only beside the clone where it exists here.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
source_dir="$(dirname "$here")"
pace=()  # options for bench/slow_machine.sh, which checks them
keep=false
usage() {
    echo "usage: $0 [--slowdown X] [--period-ms MS] [--per-core] [--keep] FOLDER [COMMAND]" >&2
    exit 2
}
while [[ $# -gt 0 ]]; do
    case "$1" in
        --slowdown | --period-ms) [[ $# -ge 2 ]] || usage; pace+=("$1" "$2"); shift 2 ;;
        --per-core) pace+=("$1"); shift ;;
        --keep) keep=true; shift ;;
        -*) echo "$0: unknown option $1" >&2; usage ;;
        *) break ;;
    esac
done
[[ $# -ge 1 ]] || usage
folder="$(realpath -m "$1")"
shift
command="${*:-./oomlab.sh test}"
[[ "$(id -u)" == 0 ]] || { echo "$0: run as root (debootstrap, chroot, mounts)" >&2; exit 2; }
# The pace's options checked (and the slowing tried) now, not after the root is made.
"$here/slow_machine.sh" "${pace[@]}" true || exit 2
if [[ -e "$folder" ]]; then
    echo "$0: $folder exists: give a folder that does not" >&2
    exit 2
fi
if ! command -v debootstrap >/dev/null; then
    echo "Installing debootstrap (Debian's tool that makes a fresh root)" >&2
    apt-get install -y -q debootstrap >/dev/null
fi

root="$folder/root"
log="$folder/command.log"
home=/root  # the newcomer is root, as the README allows
mkdir -p "$folder"

unmount() {
    # Lazily: a process the command left behind must not keep the mounts (or this machine's
    # /dev, bound below as a slave) from going.
    umount -R -l "$root" 2>/dev/null || true
    if ! $keep; then
        rm -rf "$root"
    fi
}
trap unmount EXIT
trap 'exit 130' INT TERM

echo "Making a fresh Debian 12 in $root"
debootstrap bookworm "$root" http://deb.debian.org/debian >"$folder/debootstrap.log" 2>&1 || {
    tail -20 "$folder/debootstrap.log" >&2
    exit 1
}
# This machine's apt sources (mirrors, updates, security) and what reaching the network needs
# here: its resolver, its host names and any certificate authority it added.
if compgen -G "/etc/apt/sources.list.d/*" >/dev/null || [[ -f /etc/apt/sources.list ]]; then
    rm -f "$root/etc/apt/sources.list"
    cp -r /etc/apt/sources.list.d "$root/etc/apt/"
    [[ -f /etc/apt/sources.list ]] && cp /etc/apt/sources.list "$root/etc/apt/"
fi
cp /etc/resolv.conf /etc/hosts "$root/etc/"
mkdir -p "$root/usr/local/share/ca-certificates" "$root/etc/ssl/certs"
cp -r /usr/local/share/ca-certificates/. "$root/usr/local/share/ca-certificates/"
[[ -f /etc/ssl/certs/ca-certificates.crt ]] && cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/"
[[ -f /etc/pip.conf ]] && cp /etc/pip.conf "$root/etc/"

mount --bind "$root" "$root"
mount --make-rprivate "$root"
mount -t proc proc "$root/proc"
mount -t sysfs sysfs "$root/sys"
mount --rbind /sys/fs/cgroup "$root/sys/fs/cgroup"
mount --make-rslave "$root/sys/fs/cgroup"
mount --rbind /dev "$root/dev"
mount --make-rslave "$root/dev"
mount -t tmpfs tmpfs "$root/run"

git clone -q "$source_dir" "$root$home/oomlab"
echo "A clean clone of $(git -C "$source_dir" log --oneline -1 | cut -c1-72)"
if [[ -d "$source_dir/../shared" ]]; then
    mkdir -p "$root$home/shared"
    mount --bind "$(realpath "$source_dir/../shared")" "$root$home/shared"
    mount -o remount,bind,ro "$root$home/shared"
fi

# A new login's environment, with the network settings of this machine that a machine like it
# has (proxies, pip's index and certificates), not its local wheel folder (PIP_FIND_LINKS).
environment=(HOME="$home" LANG=C.UTF-8 TERM=xterm USER=root LOGNAME=root
             PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin)
while IFS= read -r name; do
    environment+=("$name=${!name}")
done < <(compgen -e | grep -v '^PIP_FIND_LINKS$' | grep -E '^(PIP_[A-Z_]+|[a-zA-Z_]*_proxy|[A-Z_]*_PROXY|SSL_CERT_FILE|SSL_CERT_DIR|REQUESTS_CA_BUNDLE|CURL_CA_BUNDLE|PYTHONDONTWRITEBYTECODE)$')

echo "Running '$command' there through bench/slow_machine.sh ${pace[*]} (log: $log)"
started=$(date +%s.%N)
status=0
/usr/bin/time -f "%e %U %S" -o "$folder/time" \
    "$here/slow_machine.sh" "${pace[@]}" \
    chroot "$root" /usr/bin/env -i "${environment[@]}" \
    /bin/bash -c "cd $home/oomlab && $command" >"$log" 2>&1 || status=$?

/usr/bin/python3 - "$root$home/oomlab/build" "$log" "$folder/time" "$started" "$status" \
    <<'PY' | tee "$folder/summary.txt"
import os, re, sys
build, log, times, started, status = sys.argv[1:]
started = float(started)
# The last line of time's file (an exit status other than 0 is said on a line before it).
wall, user, system = map(float, open(times).read().split()[-3:])
print(f"whole command: {wall // 60:.0f} min {wall % 60:.1f} s, "
      f"exit {status}, CPU {user:.1f} s user + {system:.1f} s system")
cache = os.path.join(build, "CMakeCache.txt")
if os.path.exists(cache):
    print(f"packages and configure: {os.path.getmtime(cache) - started:.1f} s")
ninja_log = os.path.join(build, ".ninja_log")
if os.path.exists(ninja_log):
    steps = [line.split("\t") for line in open(ninja_log) if not line.startswith("#")]
    span = max(int(s[1]) for s in steps) - min(int(s[0]) for s in steps)
    print(f"build: {span / 1000:.1f} s (ninja's first to last step, {len(steps)} steps)")
text = open(log, errors="replace").read()
tests = [(float(m.group(2)), m.group(1)) for m in
         re.finditer(r"Test +#\d+: (\S+) \.*\s*\S+\s+([\d.]+) sec", text)]
suite = re.search(r"Total Test time \(real\) = +([\d.]+) sec", text)
passed = re.search(r"(\d+)% tests passed, (\d+) tests? failed out of (\d+)", text)
if tests:
    over = sorted((t for t in tests if t[0] > 30), reverse=True)
    print(f"suite: {suite.group(1) if suite else '?'} s wall, {len(tests)} tests, "
          f"{passed.group(0) if passed else 'no summary'}; their times summed "
          f"{sum(t for t, _ in tests):.1f} s, {len(over)} over 30 s"
          + "".join(f"\n  {t:6.1f} s  {name}" for t, name in over))
PY
exit "$status"
