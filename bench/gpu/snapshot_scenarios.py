"""What record_snapshots.py and record_corpus.py share: each scenario records its snapshot in a
Python process of its own (the allocator reads PYTORCH_CUDA_ALLOC_CONF once, at its first
allocation), a few at a time, each within a timeout, and a line for each; and the allocator's
own figures each scenario keeps beside its snapshot."""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import time


def write_summary(torch, summary, out_dir, name):
    """NAME.json: `summary` with torch.cuda.memory_stats' peaks, current figures and counts."""
    summary["memory_stats"] = {key: value for key, value in torch.cuda.memory_stats().items()
                               if key.endswith(".all.peak") or key.endswith(".all.current")
                               or key.startswith("num_")}
    with open(os.path.join(out_dir, f"{name}.json"), "w") as stream:
        json.dump(summary, stream, indent=1, sort_keys=True)


def run_child(script, name, conf, out_dir, timeout):
    """SCRIPT OUT_DIR --one NAME with conf as its PYTORCH_CUDA_ALLOC_CONF, its output in
    NAME.log: a line that says how it went, and whether it exited 0."""
    environment = dict(os.environ, PYTORCH_CUDA_ALLOC_CONF=conf)
    command = [sys.executable, os.path.abspath(script), out_dir, "--one", name]
    started = time.monotonic()
    with open(os.path.join(out_dir, f"{name}.log"), "w") as log:
        try:
            code = subprocess.run(command, env=environment, timeout=timeout, stdout=log,
                                  stderr=subprocess.STDOUT).returncode
        except subprocess.TimeoutExpired:
            code = "timed out"
    path = os.path.join(out_dir, f"{name}.pickle")
    size = os.path.getsize(path) if os.path.exists(path) else 0
    return (f"{name:24} {conf or '(defaults)':34} exit {code}, {size / 1e6:6.2f} MB, "
            f"{time.monotonic() - started:5.1f} s"), code == 0


def main(script, description, confs, record, jobs=1, timeout=60):
    """The command line of a script whose scenarios are `confs` (name: PYTORCH_CUDA_ALLOC_CONF)
    and whose `record(name, out_dir)` records one in the process it runs in."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("out_dir")
    parser.add_argument("--only", action="append", default=[], choices=sorted(confs))
    parser.add_argument("--jobs", type=int, default=jobs, help="scenarios at once")
    parser.add_argument("--timeout", type=float, default=timeout, help="seconds per scenario")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # the child process's scenario
    args = parser.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    if args.one:
        record(args.one, args.out_dir)
        return 0
    import torch
    if not torch.cuda.is_available():
        print(f"{os.path.basename(script)}: no CUDA device here; nothing recorded")
        return 0
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = pool.map(
            lambda name: run_child(script, name, confs[name], args.out_dir, args.timeout),
            args.only or confs)
        failed = 0
        for line, passed in results:
            print(line, flush=True)
            failed += not passed
    return 1 if failed else 0
