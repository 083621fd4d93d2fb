#!/usr/bin/env python3
"""A replay as recorded of a trace begun late, against what the program reserved.

Each real H200 snapshot (bench/results/gpu-2026-11-26/snapshots) is written again as a program
writes it when it turns its memory history on late: the same segments at the end, the trace
without its first 10%, 20%, ... 90% of events. `oomlab-cli snapshot whatif --json` replays each
under the recorded settings from the state the snapshot knows at the trace's start; the table
gives the replay's most reserved against the program's (the snapshot's figure).

    bench/late_trace_replay.py [BUILD_DIR]
"""
import gzip
import json
import pathlib
import pickle
import subprocess
import sys
import tempfile

root = pathlib.Path(__file__).resolve().parent.parent
cli = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else root / "build") / "app" / "oomlab-cli"
snapshots = sorted((root / "bench/results/gpu-2026-11-26/snapshots").glob("*.pickle.gz"))
worst = 0.0
print(f"{'snapshot':28} {'begun after':>11} {'program GiB':>11} {'replay GiB':>10} {'off':>7}")
with tempfile.TemporaryDirectory() as scratch:
    for path in snapshots:
        snapshot = pickle.load(gzip.open(path))
        trace = snapshot["device_traces"][0]
        for tenth in range(1, 10):
            snapshot["device_traces"][0] = trace[len(trace) * tenth // 10:]
            late = pathlib.Path(scratch) / "late.pickle"
            late.write_bytes(pickle.dumps(snapshot))
            out = subprocess.run([cli, "snapshot", "whatif", late, "--json"], check=True,
                                 capture_output=True, text=True).stdout
            device = json.loads(out)["devices"][0]
            program = device["program_peak_reserved"]
            replay = device["recorded"]["peak_reserved"]
            off = 100 * (replay / program - 1)
            worst = max(worst, abs(off))
            print(f"{path.name.split('.')[0]:28} {tenth * 10:>10}% {program / 2**30:>11.3f} "
                  f"{replay / 2**30:>10.3f} {off:>+6.2f}%")
print(f"largest difference: {worst:.2f}%")
