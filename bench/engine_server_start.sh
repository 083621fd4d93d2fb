#!/usr/bin/env bash
# What a command of the test suite costs started alone and started in a copy of the engine
# server (oomlab/session/engine_server.h), side by side: a two-step run (which loads LibTorch alone)
# and `runs list` (which never does). CPU per command, user + system: alone from the
# command's own process tree (/usr/bin/time), in a copy from the server's log (wait4 of the
# copy) plus its starter's. One OpenMP thread, as the test preset runs.
#
#   bench/engine_server_start.sh [BUILD_DIR] [COUNT]     (default build, 10 of each)
set -euo pipefail
build="${1:-build}"
count="${2:-10}"
cli="$(realpath "$build/app/oomlab-cli")"
[[ -x "$cli" ]] || { echo "no $build/app/oomlab-cli: build it first" >&2; exit 2; }
export OMP_NUM_THREADS=1
folder="$(mktemp -d)"
server=""
trap '[[ -z "$server" ]] || kill "$server" 2>/dev/null; rm -rf "$folder"' EXIT
db="$folder/runs.sqlite"
"$cli" run --db "$db" --set train.max_steps=2 >/dev/null 2>&1

mkdir "$folder/servers"
"$cli" engine-server "$folder/servers" 2> "$folder/server.log" &
server=$!
for _ in $(seq 300); do [[ -S "$folder/servers/oomlab-cli" ]] && break; sleep 0.1; done
[[ -S "$folder/servers/oomlab-cli" ]] || { cat "$folder/server.log" >&2; exit 1; }

# Mean CPU milliseconds of the starters of COUNT commands ARGS..., with the servers' folder or
# none.
starters_cpu() {
    local servers="$1"
    shift
    for _ in $(seq "$count"); do
        OOMLAB_ENGINE_SERVER="$servers" /usr/bin/time -f "%U %S" -o "$folder/time" \
            "$cli" "$@" >/dev/null 2>&1
        cat "$folder/time"
    done | awk -v n="$count" '{ s += $1 + $2 } END { printf "%.1f", 1000 * s / n }'
}

# Mean CPU milliseconds of the copies the server ended since line FROM of its log.
copies_cpu() {
    tail -n +"$1" "$folder/server.log" |
        awk '/^ended pid/ { s += $5 + $11; n++ } END { printf "%.1f", n ? 1000 * s / n : 0 }'
}

printf '%-28s %12s %12s %8s\n' "command (mean of $count)" "alone, ms" "copy, ms" "ratio"
for command in "run --set train.max_steps=2" "runs list"; do
    read -ra arguments <<< "$command"
    alone="$(starters_cpu "" "${arguments[@]}" --db "$db")"
    from=$(($(wc -l < "$folder/server.log") + 1))
    starters="$(starters_cpu "$folder/servers" "${arguments[@]}" --db "$db")"
    copies="$(copies_cpu "$from")"
    copy="$(awk -v a="$starters" -v b="$copies" 'BEGIN { printf "%.1f", a + b }')"
    printf '%-28s %12s %12s %7.1fx\n' "$command" "$alone" "$copy" \
        "$(awk -v a="$alone" -v c="$copy" 'BEGIN { print a / c }')"
done
