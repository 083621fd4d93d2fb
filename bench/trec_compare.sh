#!/usr/bin/env bash
# TREC, bag-of-GloVe classifier, 10 epochs, batch 32, Adam 1e-3, trainable embeddings:
# oomlab-cli against the plain PyTorch script bench/trec_bag_pytorch.py, in one run.
#
#   bench/trec_compare.sh [DATA_DIR]     (default: ../shared/data beside the project)
# Needs Debian's python3-torch (installed when missing and running as root).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
data="${1:-$root/../shared/data}"
# shellcheck source=bench/against_pytorch.sh
source "$root/bench/against_pytorch.sh"

engine="$("$cli" run --db "$scratch/runs.sqlite" --json \
    --set dataset.path="$data/trec.train.txt" --set dataset.valid_path="$data/trec.test.txt" \
    --set embeddings.source=file --set embeddings.path="$data/glove.6B.50d.head2446.txt" \
    --set embeddings.vocab=dataset --set embeddings.trainable=true --set model.kind=bag \
    --set train.epochs=10 --set train.batch_size=32 --set train.lr=0.001 \
    --set train.optimizer=adam | tail -1)"
reference="$("$python" "$root/bench/trec_bag_pytorch.py" --train "$data/trec.train.txt" \
    --test "$data/trec.test.txt" --glove "$data/glove.6B.50d.head2446.txt" --epochs 10)"

ENGINE="$engine" REFERENCE="$reference" "$python" - <<'PY'
import json, os
engine = json.loads(os.environ["ENGINE"])
reference = json.loads(os.environ["REFERENCE"])
engine_epoch = engine["wall_seconds"] / 10
print(f"{'':24}{'oomlab-cli':>12}{'PyTorch script':>16}")
print(f"{'test accuracy':24}{engine['val_accuracy']*100:>11.1f}%{reference['accuracy']*100:>15.1f}%")
print(f"{'seconds per epoch':24}{engine_epoch:>12.3f}{reference['epoch_seconds']:>16.3f}")
print(f"accuracy difference: {abs(engine['val_accuracy'] - reference['accuracy'])*100:.1f} points; "
      f"epoch speed-up: {reference['epoch_seconds'] / engine_epoch:.2f}x "
      f"(LibTorch {engine['torch_version']}, PyTorch {reference['torch']}, "
      f"{reference['threads']} intra-op thread(s))")
PY
