#!/usr/bin/env bash
# Data-parallel throughput on the CPU, end to end: `oomlab-cli run` with 1 process and with
# `--nproc 2` (Gloo on 127.0.0.1) against PyTorch's DistributedDataParallel with 1 and 2
# processes (bench/trec_bag_ddp.py), same model (bag of GloVe), data (TREC), effective batch
# 32 (32 / N per process), Adam 1e-3, the cores shared out among the processes
# (OMP_NUM_THREADS = cores / N for both). Each command is timed from its start to its exit,
# so start-up, loading, evaluation and saving count as a user waits for them; throughput is
# all ranks' training samples over that time. The four commands run interleaved, ROUNDS times;
# the table shows medians.
#
#   bench/ddp_compare.sh [DATA_DIR] [EPOCHS] [ROUNDS]   (default: ../shared/data, 10, 3)
#   OOMLAB_BENCH_TORCH=2 bench/ddp_compare.sh ...      PyTorch 2.11 on both sides (see
#                                                      bench/against_pytorch.sh)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
data="${1:-$root/../shared/data}"
epochs="${2:-10}"
rounds="${3:-3}"
# shellcheck source=bench/against_pytorch.sh
source "$root/bench/against_pytorch.sh"
cores="$(nproc)"

engine_run() {
    local processes="$1" threads=$(( cores / $1 > 0 ? cores / $1 : 1 ))
    local db="$scratch/runs-$processes-$round.sqlite"  # a new database each time
    OMP_NUM_THREADS="$threads" timed "$results" "engine $processes" \
        "$cli" run --nproc "$processes" --db "$db" --json \
        --set dataset.path="$data/trec.train.txt" --set dataset.valid_path="$data/trec.test.txt" \
        --set embeddings.source=file --set embeddings.path="$data/glove.6B.50d.head2446.txt" \
        --set model.kind=bag --set train.epochs="$epochs" --set train.batch_size=$(( 32 / $1 )) \
        --set train.optimizer=adam --set train.lr=0.001
}

reference_run() {
    local processes="$1" threads=$(( cores / $1 > 0 ? cores / $1 : 1 ))
    OMP_NUM_THREADS="$threads" timed "$results" "ddp $processes" \
        "$python" "$root/bench/trec_bag_ddp.py" \
        --train "$data/trec.train.txt" --test "$data/trec.test.txt" \
        --glove "$data/glove.6B.50d.head2446.txt" --nproc "$processes" --epochs "$epochs" \
        --threads "$threads" --batch $(( 32 / $1 ))
}

results="$scratch/results.jsonl"
for ((round = 1; round <= rounds; ++round)); do
    for processes in 1 2; do
        engine_run "$processes"
        reference_run "$processes"
    done
done

VERSION="$("$cli" --version)" "$python" - "$results" <<'PY'
import json, os, statistics, sys
runs = [json.loads(line) for line in open(sys.argv[1])]

def samples(run):
    """All ranks' training samples: every rank trains steps full micro-batches (no
    accumulation); the DDP script counts its own."""
    side, n = run["label"].split()
    result = run["result"]
    return result["samples"] if side == "ddp" else result["steps"] * result["batch_size"] * int(n)

def median(label, value):
    return statistics.median(value(r) for r in runs if r["label"] == label)

rate = lambda r: samples(r) / r["seconds"]
accuracy = lambda r: r["result"].get("val_accuracy", r["result"].get("accuracy"))
torch = next(r["result"]["torch"] for r in runs if r["label"].startswith("ddp"))
print(f"{os.environ['VERSION']} against PyTorch {torch}; median of {len(runs) // 4} "
      f"interleaved rounds; end to end (all ranks' samples / wall time)\n")
print("| processes | oomlab-cli samples/s | PyTorch DDP samples/s | ratio | accuracy (engine / DDP) |")
print("|---|---:|---:|---:|---|")
for n in (1, 2):
    e, r = median(f"engine {n}", rate), median(f"ddp {n}", rate)
    print(f"| {n} | {e:.0f} | {r:.0f} | {e / r:.2f}x | {median(f'engine {n}', accuracy) * 100:.1f}%"
          f" / {median(f'ddp {n}', accuracy) * 100:.1f}% |")
print(f"\nscaling 1 -> 2 processes: oomlab-cli "
      f"{median('engine 2', rate) / median('engine 1', rate):.2f}x, PyTorch DDP "
      f"{median('ddp 2', rate) / median('ddp 1', rate):.2f}x")
PY
