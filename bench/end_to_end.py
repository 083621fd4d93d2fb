#!/usr/bin/env python3
"""The engine against plain PyTorch, end to end: for each model (bag, BiLSTM, transformer),
`oomlab-cli run` and the reference script bench/gpu/reference_train.py train the same config
(TREC, the GloVe excerpt, the same steps, batch, optimizer and validation) on the CPU, each
process timed from its start to its exit, runs interleaved (engine, script, engine, ...), the
same threads for both (OMP_NUM_THREADS). Throughput is the samples trained over that whole
wall time: start-up, loading, validation and saving included, as a user waits for them.

    bench/end_to_end.py [--cli build-cuda/app/oomlab-cli] [--python PY] [--rounds 3]
                        [--steps 300] [--threads N] [--models bag,bilstm,transformer]

Prints a Markdown table. (bench/ddp_compare.sh does the same for several processes.)
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(HERE, "gpu"))
from benchmark_configs import common_settings, set_arguments  # noqa: E402


def timed(command, env):
    """Runs a command; returns (seconds from start to exit, its last JSON line)."""
    start = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({result.returncode}):\n{result.stderr}")
    lines = [line for line in result.stdout.splitlines() if line.startswith("{")]
    return seconds, json.loads(lines[-1]) if lines else {}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cli", default=os.path.join(ROOT, "build-cuda", "app", "oomlab-cli"))
    parser.add_argument("--python", default=sys.executable, help="a Python with torch")
    parser.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "data"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--batch", type=int, default=32, help="the effective batch")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--models", default="bag,bilstm,transformer")
    args = parser.parse_args()

    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads), MKL_NUM_THREADS=str(args.threads))
    scratch = tempfile.mkdtemp(prefix="oomlab-e2e-")
    common, data = common_settings(os.path.abspath(args.data), args.steps, "cpu")
    rows = []
    for model in args.models.split(","):
        settings = dict(common, **{"model.kind": model, "train.batch_size": str(args.batch)})
        sets = set_arguments(settings)
        resolved = os.path.join(scratch, f"{model}.json")
        with open(resolved, "w") as stream:
            subprocess.run([args.cli, "config", "show"] + sets, stdout=stream, check=True)
        engine_command = [args.cli, "run", "--db", os.path.join(scratch, "runs.sqlite"),
                          "--json"] + sets
        script = [os.path.join(HERE, "gpu", "reference_train.py"), "--resolved", resolved]
        samples = args.steps * args.batch
        engine_rates, script_rates, engine_run, script_run = [], [], {}, {}
        for _ in range(args.rounds):
            seconds, engine_run = timed(engine_command, env)
            engine_rates.append(samples / seconds)
            seconds, script_run = timed([args.python] + script, env)
            script_rates.append(samples / seconds)
        engine_rate, script_rate = statistics.median(engine_rates), statistics.median(script_rates)
        rows.append((model, engine_rate, script_rate, engine_run.get("val_accuracy"),
                     script_run.get("val_accuracy"), script_run.get("torch")))
        print(f"{model}: engine {engine_rates}, script {script_rates}", file=sys.stderr)

    version = subprocess.run([args.cli, "--version"], capture_output=True, text=True).stdout
    print(f"{version.strip()} against PyTorch {rows[0][5]}; {data}; {args.steps} steps of "
          f"{args.batch} samples, {args.threads} thread(s); "
          f"median of {args.rounds} interleaved rounds\n")
    print("| model | oomlab-cli samples/s | PyTorch samples/s | ratio | accuracy (engine / script) |")
    print("|---|---:|---:|---:|---|")
    for model, engine_rate, script_rate, engine_accuracy, script_accuracy, _ in rows:
        accuracy = (f"{engine_accuracy * 100:.1f}% / {script_accuracy * 100:.1f}%"
                    if engine_accuracy is not None and script_accuracy is not None else "n/a")
        print(f"| {model} | {engine_rate:.0f} | {script_rate:.0f} | "
              f"{engine_rate / script_rate:.2f}x | {accuracy} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
