#!/usr/bin/env python3
"""ZeRO at 2 processes: for the three models x distributed.shard (none, optimizer, gradients,
parameters), each rank's measured run peak and the parameters, gradients and optimizer state
it held at that peak, against `oomlab-cli estimate --nproc 2` (which predicts the first rank).
Adam, a trained table, batches padded to max_len 32, 8 steps, CPU (Gloo on 127.0.0.1). Prints
a Markdown table.

    bench/shard_grid.py [--cli build/app/oomlab-cli] [--steps 8] [--bucket-mb 25]
"""
import argparse
import json
import os
import subprocess
import tempfile

MODELS = ["bag", "bilstm", "transformer"]
SHARDS = ["none", "optimizer", "gradients", "parameters"]
MIB = 1 << 20


def settings(model, shard, steps, bucket_mb):
    values = {
        "model.kind": model,
        "train.optimizer": "adam",
        "embeddings.trainable": "true",
        "train.padding": "fixed",
        "train.max_len": "32",
        "train.max_steps": str(steps),
        "distributed.shard": shard,
        "distributed.bucket_mb": str(bucket_mb),
        "distributed.timeout_s": "60",
    }
    arguments = []
    for key, value in values.items():
        arguments += ["--set", f"{key}={value}"]
    return arguments


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", default="build/app/oomlab-cli")
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--bucket-mb", type=int, default=25)
    args = parser.parse_args()
    print("| model | shard | predicted peak MiB | rank 0 peak | rank 1 peak | predicted / rank 0 "
          "| parameters (predicted / rank 0 / rank 1) MiB |")
    print("|---|---|---:|---:|---:|---:|---|")
    with tempfile.TemporaryDirectory() as folder:
        for model in MODELS:
            for shard in SHARDS:
                chosen = settings(model, shard, args.steps, args.bucket_mb)
                estimate = json.loads(subprocess.run(
                    [args.cli, "estimate", "--nproc", "2", "--json"] + chosen,
                    check=True, capture_output=True, text=True).stdout)
                db = os.path.join(folder, f"{model}-{shard}.sqlite")
                subprocess.run([args.cli, "run", "--nproc", "2", "--db", db] + chosen,
                               check=True, capture_output=True, text=True)
                shown = json.loads(subprocess.run(
                    [args.cli, "runs", "show", "1", "--db", db, "--json"],
                    check=True, capture_output=True, text=True).stdout)
                ranks = sorted(shown["ranks"], key=lambda rank: rank["rank"])
                predicted = estimate["peak_bytes"]
                breakdown = estimate["breakdown"]
                predicted_parameters = breakdown["embedding_table"] + breakdown["parameters"]
                print(f"| {model} | {shard} | {predicted / MIB:.1f} "
                      f"| {ranks[0]['peak_bytes'] / MIB:.1f} | {ranks[1]['peak_bytes'] / MIB:.1f} "
                      f"| {predicted / ranks[0]['peak_bytes']:.3f} "
                      f"| {predicted_parameters / MIB:.2f} / {ranks[0]['parameters'] / MIB:.2f} / "
                      f"{ranks[1]['parameters'] / MIB:.2f} |", flush=True)


if __name__ == "__main__":
    main()
