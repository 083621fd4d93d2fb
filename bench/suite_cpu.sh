#!/usr/bin/env bash
# Where a command's CPU time goes, by program (default: the test suite, `ctest --preset
# default`): the command runs under the kernel's process accounting (the acct package's
# accton; needs root), then each ended process's user and system time is summed by its name,
# and oomlab-cli's processes are counted by how much CPU each took: one that trains first loads
# LibTorch (about 0.3 s of CPU with Debian's), so the 0.3-0.5 s row is mostly that load.
#
#   bench/suite_cpu.sh [COMMAND ARGS...]
#
# Accounting is turned off at the end: a machine that keeps its own (acct's service) must turn
# it on again.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v accton >/dev/null || ! command -v dump-acct >/dev/null; then
    if [[ $EUID -ne 0 ]]; then
        echo "$0: needs the acct package: run 'apt-get install -y acct' as root" >&2
        exit 2
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends acct >/dev/null
fi
[[ $# -gt 0 ]] || set -- ctest --preset default

record="$(mktemp /tmp/oomlab-suite-cpu-XXXXXX)"
trap 'accton off >/dev/null 2>&1 || true; rm -f "$record"' EXIT
accton "$record" >/dev/null || {
    echo "$0: cannot turn process accounting on (accton): run as root, on a kernel with BSD" \
         "process accounting (CONFIG_BSD_PROCESS_ACCT)" >&2
    exit 2
}
status=0
/usr/bin/time -f "%e s wall, %U s user, %S s system" "$@" || status=$?
accton off >/dev/null

# dump-acct's fields: name | version | user | system | elapsed | ... (times in 1/100 s).
dump-acct "$record" | awk -F'|' '
    function bucket(s) {
        return s < 0.1 ? "under 0.1 s" : s < 0.3 ? "0.1-0.3 s" : s < 0.5 ? "0.3-0.5 s" : \
               s < 1 ? "0.5-1 s" : s < 2 ? "1-2 s" : "2 s or more"
    }
    {
        name = $1; gsub(/ +$/, "", name)
        cpu = ($3 + $4) / 100
        total += cpu; by_name[name] += cpu; count[name]++
        if (name == "oomlab-cli") { b = bucket(cpu); cli_n[b]++; cli_s[b] += cpu }
    }
    END {
        printf "%d processes, %.1f s of CPU\n\n%10s %6s %7s  %s\n", NR, total, "CPU s", "share",
               "count", "program"
        for (name in by_name) {
            if (by_name[name] >= total / 200) {
                printf "%10.1f %5.1f%% %7d  %s\n", by_name[name], 100 * by_name[name] / total,
                       count[name], name | "sort -rn"
            }
        }
        close("sort -rn")
        split("under 0.1 s,0.1-0.3 s,0.3-0.5 s,0.5-1 s,1-2 s,2 s or more", order, ",")
        printf "\noomlab-cli processes by their CPU time:\n"
        for (i = 1; i <= 6; i++) {
            printf "%12s %6d processes %8.1f s\n", order[i], cli_n[order[i]], cli_s[order[i]]
        }
    }'
exit "$status"
