#!/usr/bin/env python3
"""What recording shapes costs a CPU profile as `oomlab-cli record` makes one (profile_memory,
with_stack, and record_shapes since the GPU estimate reads RNN calls' shapes): one of
bench/gpu/cpu_estimate.py's scripts profiled with and without record_shapes, alternately, each
time in a fresh process; the profiled steps' time, the export's, and the trace's size.

    bench/record_shapes_cost.py [--shape gru] [--repeat 3] [--python PY]
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent


def profiled(shape, shapes, trace):
    """In the child: the script's steps under the profiler; prints its figures as JSON."""
    import torch
    from torch.profiler import ProfilerActivity, profile
    sys.path.insert(0, str(HERE / "gpu"))
    import cpu_estimate
    torch.set_num_threads(2)
    cpu_estimate.train(shape, "cpu", 1)  # imports and first-call costs outside the figure
    profiler = profile(activities=[ProfilerActivity.CPU], profile_memory=True, with_stack=True,
                       record_shapes=shapes)
    start = time.perf_counter()
    with profiler:
        cpu_estimate.train(shape, "cpu", cpu_estimate.STEPS)
    steps = time.perf_counter() - start
    start = time.perf_counter()
    profiler.export_chrome_trace(trace)
    print(json.dumps({"steps_s": steps, "export_s": time.perf_counter() - start,
                      "trace_bytes": os.path.getsize(trace)}))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shape", default="gru")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--child", choices=["with", "without"])
    parser.add_argument("--trace")
    args = parser.parse_args()
    if args.child:
        profiled(args.shape, args.child == "with", args.trace)
        return 0
    runs = {"with": [], "without": []}
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(args.repeat):
            for kind in ("without", "with"):
                done = subprocess.run([args.python, __file__, "--child", kind, "--shape",
                                       args.shape, "--trace", f"{folder}/{kind}.json"],
                                      capture_output=True, text=True, check=True)
                runs[kind].append(json.loads(done.stdout.splitlines()[-1]))
    for kind, figures in runs.items():
        steps = ", ".join(f"{figure['steps_s']:.2f}" for figure in figures)
        print(f"{args.shape} {kind:7} record_shapes: steps {steps} s (median "
              f"{statistics.median(f['steps_s'] for f in figures):.2f}), export median "
              f"{statistics.median(f['export_s'] for f in figures):.2f} s, trace "
              f"{figures[0]['trace_bytes'] / 2**20:.1f} MiB")
    ratio = (statistics.median(f["steps_s"] for f in runs["with"]) /
             statistics.median(f["steps_s"] for f in runs["without"]))
    print(f"{args.shape}: the profiled steps take {ratio:.2f}x with shapes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
