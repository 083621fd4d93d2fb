#!/usr/bin/env bash
# Which tests start the `oomlab-cli` processes that load LibTorch: the command (default: the
# test suite, `ctest --preset default`) runs with a small preloaded library that, as each
# oomlab-cli process ends, writes its CPU time, whether LibTorch was loaded in it, its first
# two arguments and the test it ran for (the nearest ancestor process that is a gtest case, a
# Python unittest or a workbench test). The table sums them by test. suite_cpu.sh sums the
# CPU by program; this says which tests to look at. Processes killed by a signal write
# nothing, so their tests are undercounted.
#
#   bench/suite_cli_calls.sh [COMMAND ARGS...]
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $# -gt 0 ]] || set -- ctest --preset default

work="$(mktemp -d /tmp/oomlab-cli-calls-XXXXXX)"
trap 'rm -rf "$work"' EXIT
cc -shared -fPIC -O2 -x c -o "$work/cli_calls.so" - <<'C'
#define _GNU_SOURCE
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static int is_cli;
static char arguments[256];

static void read_file(const char* path, char* text, size_t size) {
    FILE* file = fopen(path, "r");
    size_t read = file ? fread(text, 1, size - 1, file) : 0;
    if (file) fclose(file);
    for (size_t i = 0; i < read; i++) if (!text[i]) text[i] = ' ';
    text[read] = 0;
}

__attribute__((constructor)) static void started(int argc, char** argv) {
    char exe[512] = {0};
    if (readlink("/proc/self/exe", exe, sizeof exe - 1) < 0) return;
    is_cli = strstr(exe, "/oomlab-cli") != NULL;
    for (int i = 1; is_cli && i < argc && i < 3; i++) {
        strncat(arguments, argv[i], sizeof arguments - strlen(arguments) - 2);
        strcat(arguments, " ");
    }
}

static int note_torch(struct dl_phdr_info* info, size_t size, void* loaded) {
    (void)size;
    if (info->dlpi_name && strstr(info->dlpi_name, "libtorch_cpu")) *(int*)loaded = 1;
    return 0;
}

// The test this process ran for: the nearest ancestor that is one.
static void test_of(char* test, size_t size) {
    int pid = getppid();
    for (int level = 0; level < 6 && pid > 1; level++) {
        char path[64], stat[1024];
        snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
        read_file(path, test, size);
        if (strstr(test, "--gtest_filter=") || strstr(test, "unittest") ||
            strstr(test, "/tests/ui/")) return;
        snprintf(path, sizeof path, "/proc/%d/stat", pid);
        read_file(path, stat, sizeof stat);
        const char* after_name = strrchr(stat, ')');
        if (!after_name || sscanf(after_name + 2, "%*c %d", &pid) != 1) break;
    }
    snprintf(test, size, "(no test)");
}

__attribute__((destructor)) static void ended(void) {
    const char* log = getenv("OOMLAB_CLI_CALLS_LOG");
    if (!is_cli || !log) return;
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    int torch = 0;
    dl_iterate_phdr(note_torch, &torch);
    char test[4096];
    test_of(test, sizeof test);
    FILE* out = fopen(log, "a");
    if (!out) return;
    fprintf(out, "%.3f\t%d\t%s\t%s\n",
            usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
                (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6,
            torch, arguments, test);
    fclose(out);
}
C

status=0
OOMLAB_CLI_CALLS_LOG="$work/calls.tsv" LD_PRELOAD="$work/cli_calls.so" "$@" || status=$?
touch "$work/calls.tsv"
python3 - "$work/calls.tsv" <<'PY'
import collections
import re
import sys

by_test = collections.defaultdict(lambda: [0, 0, 0.0])
with open(sys.argv[1], encoding="utf-8", errors="replace") as calls:
    for line in calls:
        cpu, torch, _, test = line.rstrip("\n").split("\t")[:4]
        named = (re.search(r"--gtest_filter=(\S+)", test) or
                 re.search(r"unittest -v (\S+)", test) or re.search(r"/tests/ui/(\S+)", test))
        row = by_test[named.group(1) if named else test[:80]]
        row[0] += 1
        row[1] += int(torch)
        row[2] += float(cpu)
rows = sorted(by_test.items(), key=lambda item: -item[1][2])
print(f"{sum(r[0] for _, r in rows)} oomlab-cli processes, {sum(r[1] for _, r in rows)} loaded "
      f"LibTorch, {sum(r[2] for _, r in rows):.1f} s of CPU\n")
print(f"{'calls':>6} {'torch':>6} {'CPU s':>7}  test")
for test, (calls, torch, cpu) in rows[:40]:
    print(f"{calls:6d} {torch:6d} {cpu:7.1f}  {test}")
PY
exit "$status"
