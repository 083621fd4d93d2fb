#!/usr/bin/env bash
# TREC, bag-of-GloVe classifier, 10 epochs, batch 32, Adam 1e-3, trainable embeddings:
# oomlab-cli against the plain PyTorch script bench/trec_bag_pytorch.py, end to end: each
# command timed from its start to its exit (loading, validation and saving included), the same
# threads for both (OMP_NUM_THREADS), interleaved ROUNDS times, medians shown. Throughput is
# 10 epochs of the 5,452 training questions over that time.
#
#   bench/trec_compare.sh [DATA_DIR] [ROUNDS]     (default: ../shared/data beside the project, 3)
#   OOMLAB_BENCH_TORCH=2 bench/trec_compare.sh    PyTorch 2.11 on both sides (see
#                                                 bench/against_pytorch.sh)
# bench/end_to_end.py does the same for the three models with the engine's own settings.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
data="${1:-$root/../shared/data}"
rounds="${2:-3}"
# shellcheck source=bench/against_pytorch.sh
source "$root/bench/against_pytorch.sh"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-$(nproc)}"

results="$scratch/results.jsonl"
for ((round = 1; round <= rounds; ++round)); do
    timed "$results" engine "$cli" run --db "$scratch/runs-$round.sqlite" --json \
        --set dataset.path="$data/trec.train.txt" --set dataset.valid_path="$data/trec.test.txt" \
        --set embeddings.source=file --set embeddings.path="$data/glove.6B.50d.head2446.txt" \
        --set embeddings.vocab=dataset --set embeddings.trainable=true --set model.kind=bag \
        --set train.epochs=10 --set train.batch_size=32 --set train.lr=0.001 \
        --set train.optimizer=adam
    timed "$results" script "$python" "$root/bench/trec_bag_pytorch.py" \
        --train "$data/trec.train.txt" --test "$data/trec.test.txt" \
        --glove "$data/glove.6B.50d.head2446.txt" --epochs 10
done

"$python" - "$results" <<'PY'
import json, statistics, sys
runs = [json.loads(line) for line in open(sys.argv[1])]
engine_runs = [r for r in runs if r["label"] == "engine"]
script_runs = [r for r in runs if r["label"] == "script"]
samples = 10 * 5452
engine = samples / statistics.median(r["seconds"] for r in engine_runs)
script = samples / statistics.median(r["seconds"] for r in script_runs)
engine_accuracy = statistics.median(r["result"]["val_accuracy"] for r in engine_runs)
script_accuracy = statistics.median(r["result"]["accuracy"] for r in script_runs)
print(f"{'':28}{'oomlab-cli':>12}{'PyTorch script':>16}")
print(f"{'test accuracy':28}{engine_accuracy * 100:>11.1f}%{script_accuracy * 100:>15.1f}%")
print(f"{'samples/s, end to end':28}{engine:>12.0f}{script:>16.0f}")
print(f"end to end: {engine / script:.2f}x (LibTorch {engine_runs[0]['result']['torch_version']}, "
      f"PyTorch {script_runs[0]['result']['torch']}, median of {len(engine_runs)} interleaved "
      f"rounds)")
PY
