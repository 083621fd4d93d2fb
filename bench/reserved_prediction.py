#!/usr/bin/env python3
"""The estimator's prediction of reserved memory against what runs reserved.

On the CPU (default): each config is estimated (`oomlab-cli estimate --json`) and trained with
memory.alloc_conf set, so that its tensors pass through the caching allocator's model; the
table gives, predicted against measured, the tensors' peak, the allocator's cache at that
peak, the reserved memory at the peak (the two together) and the most reserved at any moment
(from the run's metric rows).

With --gpu-benchmark FILE (bench/results/gpu-*/benchmark.json): the GPU runs recorded there
are estimated again here, and the prediction is set beside what the engine reserved at its
peak on the GPU and the most PyTorch's own script reserved.

  bench/reserved_prediction.py --cli build/app/oomlab-cli [--data ../shared/data]
  bench/reserved_prediction.py --cli build/app/oomlab-cli --gpu-benchmark FILE --data DIR
"""
import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import tempfile

MiB = 1 << 20

CONFIGS = [
    ("bag", {"model.kind": "bag"}),
    ("bilstm", {"model.kind": "bilstm"}),
    ("bilstm bf16", {"model.kind": "bilstm", "memory.precision": "bf16"}),
    ("transformer", {"model.kind": "transformer"}),
    ("transformer bf16", {"model.kind": "transformer", "memory.precision": "bf16"}),
    ("transformer b128", {"model.kind": "transformer", "train.batch_size": "128"}),
    ("bilstm 16 x 4 accumulated",
     {"model.kind": "bilstm", "train.batch_size": "16", "train.accumulation": "4"}),
    ("bag b512 adam", {"model.kind": "bag", "train.batch_size": "512", "train.optimizer": "adam"}),
    ("transformer b128 expandable", {"model.kind": "transformer", "train.batch_size": "128",
                                     "memory.alloc_conf": "expandable_segments:True"}),
    ("transformer 4 layers checkpointed b64",
     {"model.kind": "transformer", "model.layers": "4", "memory.checkpointing": "layers",
      "train.batch_size": "64"}),
]


def set_arguments(settings):
    arguments = []
    for key, value in settings.items():
        arguments += ["--set", f"{key}={value}"]
    return arguments


def last_json(text):
    return json.loads(text.strip().splitlines()[-1])


def estimate(cli, settings, scratch):
    out = subprocess.run([cli, "estimate", "--json", "--db", os.path.join(scratch, "e.sqlite")]
                         + set_arguments(settings), capture_output=True, text=True, check=True)
    return last_json(out.stdout)


def datasets(data_dir):
    """The fortunes the engine trains on by default, and TREC where the shared data has it."""
    sets = [("fortunes", {"embeddings.source": "synthetic", "dataset.valid_ratio": "0"})]
    trec = os.path.join(data_dir, "trec.train.txt") if data_dir else ""
    if trec and os.path.exists(trec):
        sets.append(("TREC", {
            "dataset.path": trec, "dataset.valid_path": os.path.join(data_dir, "trec.test.txt"),
            "dataset.format": "label-space-text", "embeddings.source": "file",
            "embeddings.path": os.path.join(data_dir, "glove.6B.50d.head2446.txt")}))
    return sets


def on_the_cpu(cli, data_dir, steps):
    scratch = tempfile.mkdtemp(prefix="oomlab-reserved-")
    database = os.path.join(scratch, "runs.sqlite")
    print(f"{steps} steps each, memory.alloc_conf=backend:native unless named; MiB, "
          "predicted / measured")
    print(f"| data | config | tensors at the peak | cache at the peak | reserved at the peak "
          f"| off | most reserved | off |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    offs, most_offs = [], []
    for data_name, data_settings in datasets(data_dir):
        for label, config in CONFIGS:
            settings = {"device": "cpu", "train.max_steps": str(steps),
                        "memory.alloc_conf": "backend:native", **data_settings, **config}
            predicted = estimate(cli, settings, scratch)
            run = subprocess.run([cli, "run", "--json", "--db", database]
                                 + set_arguments(settings), capture_output=True, text=True,
                                 check=True)
            summary = last_json(run.stdout)
            with sqlite3.connect(database) as db:
                most = db.execute("select max(reserved_bytes) from metrics where run_id = ?",
                                  (summary["run_id"],)).fetchone()[0] or 0
            cache = summary["breakdown"]["allocator_cache"]
            reserved = summary["peak_bytes"] + cache
            off = (predicted["reserved_bytes"] - reserved) / reserved
            most_off = (predicted["reserved_peak_bytes"] - most) / most
            offs.append((abs(off), f"{data_name} {label}"))
            most_offs.append((abs(most_off), f"{data_name} {label}"))
            print(f"| {data_name} | {label} "
                  f"| {predicted['peak_bytes'] / MiB:.1f} / {summary['peak_bytes'] / MiB:.1f} "
                  f"| {predicted['breakdown']['allocator_cache'] / MiB:.1f} / {cache / MiB:.1f} "
                  f"| {predicted['reserved_bytes'] / MiB:.1f} / {reserved / MiB:.1f} "
                  f"| {100 * off:+.1f}% "
                  f"| {predicted['reserved_peak_bytes'] / MiB:.1f} / {most / MiB:.1f} "
                  f"| {100 * most_off:+.1f}% |")
    for name, values in (("reserved at the peak", offs), ("most reserved", most_offs)):
        worst = max(values)
        print(f"{name}: median |off| {100 * statistics.median(v for v, _ in values):.1f}%, "
              f"worst {100 * worst[0]:.1f}% ({worst[1]})")


def against_gpu(cli, benchmark_file, data_dir):
    scratch = tempfile.mkdtemp(prefix="oomlab-reserved-")
    with open(benchmark_file) as stream:
        benchmark = json.load(stream)
    print("MiB; the engine's reserved at its peak and the PyTorch script's most reserved, on "
          f"the GPU of {os.path.basename(benchmark_file)}")
    print("| config | tensors: predicted / GPU | reserved at the peak: predicted / engine "
          "| off | most reserved: predicted / script | off |")
    print("|---|---:|---:|---:|---:|---:|")
    for result in benchmark["results"]:
        settings = {key: value.replace("$SCRATCH/data", data_dir)
                    for key, value in result["settings"].items()}
        predicted = estimate(cli, settings, scratch)
        engine = result["engine"]
        reserved = engine["peak_bytes"] + engine["breakdown"]["allocator_cache"]
        script = result["reference"].get("peak_reserved_bytes") or 0
        print(f"| {result['label']} "
              f"| {predicted['peak_bytes'] / MiB:.1f} / {engine['peak_bytes'] / MiB:.1f} "
              f"| {predicted['reserved_bytes'] / MiB:.1f} / {reserved / MiB:.1f} "
              f"| {100 * (predicted['reserved_bytes'] - reserved) / reserved:+.1f}% "
              f"| {predicted['reserved_peak_bytes'] / MiB:.1f} / {script / MiB:.1f} "
              f"| {100 * (predicted['reserved_peak_bytes'] - script) / script:+.1f}% |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", required=True, help="oomlab-cli")
    parser.add_argument("--data", default="", help="the shared data folder (TREC, GloVe)")
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--gpu-benchmark", help="a GPU benchmark's JSON to set the "
                        "prediction beside")
    args = parser.parse_args()
    if args.gpu_benchmark:
        against_gpu(args.cli, args.gpu_benchmark, args.data)
    else:
        on_the_cpu(args.cli, args.data, args.steps)


if __name__ == "__main__":
    main()
