#!/usr/bin/env python3
"""The engine against plain PyTorch, end to end: for each model (bag, BiLSTM, transformer),
`oomlab-cli run` and the reference script bench/gpu/reference_train.py train the same config
(TREC, the GloVe excerpt, the same steps, batch, optimizer and validation) on the CPU, each
process timed from its start to its exit, runs interleaved (engine, script, engine, ...), the
same threads for both (OMP_NUM_THREADS). Throughput is the samples trained over that whole
wall time: start-up, loading, validation and saving included, as a user waits for them.

    bench/end_to_end.py [--cli build/app/oomlab-cli --cli build-cuda/app/oomlab-cli]
                        [--python PY] [--rounds 3] [--steps 300] [--threads N]
                        [--models bag,bilstm,transformer] [--native-lstm]

Every build given (by default build/ and build-cuda/, where built) runs in each round. Prints
a Markdown table of throughput, and one of where each step's time goes (the engine's
seconds_by_part, and the script's for the parts it has). (bench/ddp_compare.sh does the same for several processes.)
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


PARTS = ("setup", "data", "forward", "backward", "update", "evaluation", "measurement",
         "recording", "finish")


def build_name(cli):
    """The LibTorch a build links, as its --version says ("... LibTorch 1.13.0 ...")."""
    version = subprocess.run([cli, "--version"], capture_output=True, text=True).stdout.strip()
    return version.splitlines()[0] if version else cli


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cli", action="append",
                        help="an oomlab-cli build (repeat for several; default: build/ and "
                             "build-cuda/ where built)")
    parser.add_argument("--python", default=sys.executable, help="a Python with torch")
    parser.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "data"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--batch", type=int, default=32, help="the effective batch")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--models", default="bag,bilstm,transformer")
    parser.add_argument("--native-lstm", action="store_true",
                        help="the script runs the engine's LSTM kernel (ATen's native one), "
                             "not oneDNN's")
    args = parser.parse_args()
    clis = args.cli or [path for path in (os.path.join(ROOT, build, "app", "oomlab-cli")
                                          for build in ("build", "build-cuda"))
                        if os.path.exists(path)]
    if not clis:
        raise SystemExit("no oomlab-cli built: give --cli")
    builds = [build_name(cli) for cli in clis]
    # Two builds of one version (an A/B of a change) are told apart by their paths.
    builds = [f"{build} ({cli})" if builds.count(build) > 1 else build
              for build, cli in zip(builds, clis)]

    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads), MKL_NUM_THREADS=str(args.threads))
    scratch = tempfile.mkdtemp(prefix="oomlab-e2e-")
    common, data = common_settings(os.path.abspath(args.data), args.steps, "cpu")
    rows, parts = [], {}
    for model in args.models.split(","):
        settings = dict(common, **{"model.kind": model, "train.batch_size": str(args.batch)})
        sets = set_arguments(settings)
        resolved = os.path.join(scratch, f"{model}.json")
        with open(resolved, "w") as stream:
            subprocess.run([clis[0], "config", "show"] + sets, stdout=stream, check=True)
        script = [args.python, os.path.join(HERE, "gpu", "reference_train.py"),
                  "--resolved", resolved]
        if args.native_lstm:
            script.append("--native-lstm")
        samples = args.steps * args.batch
        engine_rates = [[] for _ in clis]
        script_rates, engine_runs, script_run = [], [{} for _ in clis], {}
        for _ in range(args.rounds):
            for index, cli in enumerate(clis):
                command = [cli, "run", "--db", os.path.join(scratch, "runs.sqlite"),
                           "--json"] + sets
                seconds, engine_runs[index] = timed(command, env)
                engine_rates[index].append(samples / seconds)
            seconds, script_run = timed(script, env)
            script_rates.append(samples / seconds)
        script_rate = statistics.median(script_rates)
        for index, build in enumerate(builds):
            rows.append((model, build, statistics.median(engine_rates[index]), script_rate,
                         engine_runs[index].get("val_accuracy"), script_run.get("val_accuracy")))
            parts[(model, build)] = engine_runs[index].get("seconds_by_part") or {}
            print(f"{model} ({build}): engine {engine_rates[index]}", file=sys.stderr)
        parts[(model, "script")] = script_run.get("seconds_by_part") or {}
        torch_version = script_run.get("torch")
        print(f"{model}: script {script_rates}", file=sys.stderr)

    # Debian's LibTorch takes its products' kernels from OpenBLAS, which follows this.
    blas = os.environ.get("OPENBLAS_CORETYPE")
    print(f"Against PyTorch {torch_version}'s own script; {data}; {args.steps} steps of "
          f"{args.batch} samples, {args.threads} thread(s); median of {args.rounds} "
          "interleaved rounds" + (f"; OPENBLAS_CORETYPE={blas}" if blas else "") + "\n")
    print("| model | build | oomlab-cli samples/s | PyTorch samples/s | ratio "
          "| accuracy (engine / script) |")
    print("|---|---|---:|---:|---:|---|")
    for model, build, engine_rate, script_rate, engine_accuracy, script_accuracy in rows:
        accuracy = (f"{engine_accuracy * 100:.1f}% / {script_accuracy * 100:.1f}%"
                    if engine_accuracy is not None and script_accuracy is not None else "n/a")
        print(f"| {model} | {build} | {engine_rate:.0f} | {script_rate:.0f} | "
              f"{engine_rate / script_rate:.2f}x | {accuracy} |")

    # Where the time goes: ms per step in each part, the last round's runs.
    columns = builds + ["script"]
    print("\nms per step by part (the last round; the script times the parts it has)\n")
    print("| model | part | " + " | ".join(columns) + " |")
    print("|---|---|" + "---:|" * len(columns))
    for model in args.models.split(","):
        for part in PARTS:
            cells = []
            for column in columns:
                seconds = parts.get((model, column), {}).get(part)
                cells.append(f"{seconds * 1000 / args.steps:.2f}" if seconds is not None else "")
            if any(cells):
                print(f"| {model} | {part} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
