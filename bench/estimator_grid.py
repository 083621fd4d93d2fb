#!/usr/bin/env python3
"""Estimator accuracy: for each config of a grid spanning the three models, precisions,
checkpointing, accumulation, vocabulary and optimizers, compare `oomlab-cli estimate` with
the peak that `oomlab-cli run` measures (a few steps with a validation pass, CPU, tracking
allocator). Prints a Markdown table and the median and worst absolute error.

    bench/estimator_grid.py [--cli build/app/oomlab-cli] [--steps 4]
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile

GRID = [
    # (label, settings)
    ("bag adam", {"model.kind": "bag"}),
    ("bag sgd", {"model.kind": "bag", "train.optimizer": "sgd"}),
    ("bag momentum", {"model.kind": "bag", "train.optimizer": "momentum"}),
    ("bag adagrad", {"model.kind": "bag", "train.optimizer": "adagrad"}),
    ("bag frozen", {"model.kind": "bag", "embeddings.trainable": "false"}),
    ("bag 300d full vocab", {"model.kind": "bag", "embeddings.variant": "6B.300d",
                             "embeddings.vocab": "full"}),
    ("bag top:50000", {"model.kind": "bag", "embeddings.vocab": "top:50000"}),
    ("bag b256 fixed", {"model.kind": "bag", "train.batch_size": "256", "train.padding": "fixed"}),
    ("bag bf16", {"model.kind": "bag", "memory.precision": "bf16"}),
    ("bag eager", {"model.kind": "bag", "data.loading": "eager"}),
    ("bilstm adam", {"model.kind": "bilstm"}),
    ("bilstm bf16", {"model.kind": "bilstm", "memory.precision": "bf16"}),
    ("bilstm acc4", {"model.kind": "bilstm", "train.batch_size": "8", "train.accumulation": "4"}),
    ("bilstm 1 layer b64", {"model.kind": "bilstm", "model.layers": "1", "train.batch_size": "64"}),
    ("bilstm sgd frozen", {"model.kind": "bilstm", "train.optimizer": "sgd",
                           "embeddings.trainable": "false"}),
    ("bilstm bucket", {"model.kind": "bilstm", "train.padding": "bucket"}),
    ("transformer adam", {"model.kind": "transformer"}),
    ("transformer bf16", {"model.kind": "transformer", "memory.precision": "bf16"}),
    ("transformer ckpt 4 layers", {"model.kind": "transformer", "model.layers": "4",
                                   "memory.checkpointing": "layers"}),
    ("transformer 4 layers", {"model.kind": "transformer", "model.layers": "4"}),
    ("transformer acc4", {"model.kind": "transformer", "train.batch_size": "8",
                          "train.accumulation": "4"}),
    ("transformer b128", {"model.kind": "transformer", "train.batch_size": "128"}),
    ("transformer len128 fixed", {"model.kind": "transformer", "train.max_len": "128",
                                  "train.padding": "fixed"}),
    ("transformer adamw d256", {"model.kind": "transformer", "train.optimizer": "adamw",
                                "model.d_model": "256", "model.ffn": "1024"}),
    ("transformer ckpt bf16", {"model.kind": "transformer", "memory.checkpointing": "layers",
                               "memory.precision": "bf16"}),
    ("transformer full vocab frozen", {"model.kind": "transformer", "embeddings.vocab": "full",
                                       "embeddings.trainable": "false"}),
    ("transformer no dropout", {"model.kind": "transformer", "model.dropout": "0"}),
    ("bag eval with autograd", {"model.kind": "bag", "eval.no_grad": "false"}),
]


def cli_json(cli, args):
    result = subprocess.run([cli] + args + ["--json"], capture_output=True, text=True)
    if result.returncode not in (0, 3):
        raise SystemExit(f"{' '.join(args)} failed: {result.stderr}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", default=os.path.join(root, "build", "app", "oomlab-cli"))
    parser.add_argument("--steps", type=int, default=4)
    args = parser.parse_args()
    errors = []
    mib = 1 << 20
    print("| config | estimated MiB | measured MiB | error |")
    print("|---|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as scratch:
        db = os.path.join(scratch, "runs.sqlite")
        for label, settings in GRID:
            sets = []
            for key, value in {"train.max_steps": str(args.steps), "device": "cpu",
                               **settings}.items():
                sets += ["--set", f"{key}={value}"]
            estimated = cli_json(args.cli, ["estimate"] + sets)["peak_bytes"]
            measured = cli_json(args.cli, ["run", "--db", db] + sets)["peak_bytes"]
            error = (estimated - measured) / measured
            errors.append(abs(error))
            print(f"| {label} | {estimated / mib:.1f} | {measured / mib:.1f} | {error * 100:+.1f}% |",
                  flush=True)
    print()
    print(f"{len(errors)} configs: median absolute error {statistics.median(errors) * 100:.1f}%, "
          f"worst {max(errors) * 100:.1f}%")


if __name__ == "__main__":
    main()
