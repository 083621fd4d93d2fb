#!/usr/bin/env python3
"""Estimator accuracy: for each config of a grid spanning the three models, precisions,
checkpointing, accumulation, vocabulary and optimizers, compare `oomlab-cli estimate` with
the peak that `oomlab-cli run` measures (a few steps with a validation pass, CPU, tracking
allocator). Prints a Markdown table and the median and worst absolute error; then, per
module, the predicted against the measured bytes of every module that holds more than 10% of
the measured peak (parameters + gradients + optimizer state + activations).

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


def module_totals(summary):
    return {m["module"]: m["parameters"] + m["gradients"] + m["optimizer_state"] +
            (m.get("activations") or m.get("temporaries") or 0) for m in summary["by_module"]}


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", default=os.path.join(root, "build", "app", "oomlab-cli"))
    parser.add_argument("--steps", type=int, default=4)
    args = parser.parse_args()
    errors = []
    module_rows = []
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
            estimate = cli_json(args.cli, ["estimate"] + sets)
            run = cli_json(args.cli, ["run", "--db", db] + sets)
            estimated, measured = estimate["peak_bytes"], run["peak_bytes"]
            error = (estimated - measured) / measured
            errors.append(abs(error))
            print(f"| {label} | {estimated / mib:.1f} | {measured / mib:.1f} | {error * 100:+.1f}% |",
                  flush=True)
            predicted_modules = module_totals(estimate)
            for module, bytes_measured in module_totals(run).items():
                if bytes_measured > 0.10 * measured:
                    predicted = predicted_modules.get(module, 0)
                    module_rows.append((label, module, predicted, bytes_measured,
                                        (predicted - bytes_measured) / bytes_measured))
    print()
    print(f"{len(errors)} configs: median absolute error {statistics.median(errors) * 100:.1f}%, "
          f"worst {max(errors) * 100:.1f}%")
    print()
    print("| config | module (> 10% of the peak) | estimated MiB | measured MiB | error |")
    print("|---|---|---:|---:|---:|")
    for label, module, predicted, measured, error in module_rows:
        print(f"| {label} | {module} | {predicted / mib:.2f} | {measured / mib:.2f} | "
              f"{error * 100:+.1f}% |")
    module_errors = [abs(row[4]) for row in module_rows]
    within = sum(1 for e in module_errors if e <= 0.15)
    print()
    print(f"{len(module_rows)} modules over 10% of their run's peak: median absolute error "
          f"{statistics.median(module_errors) * 100:.1f}%, worst {max(module_errors) * 100:.1f}%, "
          f"{within} within 15%")


if __name__ == "__main__":
    main()
