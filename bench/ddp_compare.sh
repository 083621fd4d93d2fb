#!/usr/bin/env bash
# Data-parallel throughput on the CPU, in one run: `oomlab-cli run` with 1 process and with
# `--nproc 2` (Gloo on 127.0.0.1) against PyTorch's DistributedDataParallel with 1 and 2
# processes (bench/trec_bag_ddp.py), same model (bag of GloVe), data (TREC), effective batch
# 32 (32 / N per process), Adam 1e-3, the cores shared out among the processes.
#
#   bench/ddp_compare.sh [DATA_DIR] [EPOCHS]   (default: ../shared/data beside the project, 10)
# Needs Debian's python3-torch (installed when missing and running as root).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
data="${1:-$root/../shared/data}"
epochs="${2:-10}"
# shellcheck source=bench/against_pytorch.sh
source "$root/bench/against_pytorch.sh"
cores="$(nproc)"

# Samples per second over all ranks: each rank's median step rate, summed.
engine_rate() {
    local processes="$1" threads=$(( cores / $1 > 0 ? cores / $1 : 1 ))
    local db="$scratch/runs-$processes.sqlite"
    OMP_NUM_THREADS="$threads" "$cli" run --nproc "$processes" --db "$db" \
        --set dataset.path="$data/trec.train.txt" --set dataset.valid_path="$data/trec.test.txt" \
        --set embeddings.source=file --set embeddings.path="$data/glove.6B.50d.head2446.txt" \
        --set model.kind=bag --set train.epochs="$epochs" --set train.batch_size=$(( 32 / $1 )) \
        --set train.optimizer=adam --set train.lr=0.001 >/dev/null
    "$python" - "$db" <<'PY'
import json, sqlite3, statistics, sys
db = sqlite3.connect(sys.argv[1])
rates = {}
for rank, rate in db.execute("SELECT rank, samples_per_s FROM metrics "
                             "WHERE phase = 'step' AND samples_per_s IS NOT NULL"):
    rates.setdefault(rank, []).append(rate)
accuracy, = db.execute("SELECT val_accuracy FROM runs").fetchone()
print(json.dumps({"samples_per_s": sum(statistics.median(r) for r in rates.values()),
                  "accuracy": accuracy}))
PY
}

reference_rate() {
    local processes="$1" threads=$(( cores / $1 > 0 ? cores / $1 : 1 ))
    "$python" "$root/bench/trec_bag_ddp.py" --train "$data/trec.train.txt" \
        --test "$data/trec.test.txt" --glove "$data/glove.6B.50d.head2446.txt" \
        --nproc "$processes" --epochs "$epochs" --threads "$threads" --batch $(( 32 / $1 ))
}

E1="$(engine_rate 1)" E2="$(engine_rate 2)" R1="$(reference_rate 1)" R2="$(reference_rate 2)" \
    "$python" - <<'PY'
import json, os
e1, e2, r1, r2 = (json.loads(os.environ[k]) for k in ("E1", "E2", "R1", "R2"))
print(f"{'samples/s (all ranks)':26}{'oomlab-cli':>12}{'PyTorch DDP':>14}{'ratio':>8}")
for n, e, r in ((1, e1, r1), (2, e2, r2)):
    print(f"{str(n) + ' process' + ('es' if n > 1 else ''):26}{e['samples_per_s']:>12.0f}"
          f"{r['samples_per_s']:>14.0f}{e['samples_per_s'] / r['samples_per_s']:>7.2f}x")
print(f"{'scaling 1 -> 2 processes':26}{e2['samples_per_s'] / e1['samples_per_s']:>11.2f}x"
      f"{r2['samples_per_s'] / r1['samples_per_s']:>13.2f}x")
print(f"{'test accuracy, 2 processes':26}{e2['accuracy'] * 100:>11.1f}%{r2['accuracy'] * 100:>13.1f}%"
      f"   (1 process: {e1['accuracy'] * 100:.1f}% / {r1['accuracy'] * 100:.1f}%)")
print(f"PyTorch {r1['torch']}")
PY
