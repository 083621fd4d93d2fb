#!/usr/bin/env python3
"""cuDNN's RNN buffers (LSTM and GRU, any layers and directions) fitted to what
bench/gpu/probe_kernels.py recorded on a GPU, and checked on the scripts' own RNNs recorded
there (bench/gpu/cpu_estimate.py run --snapshot), whose shapes are off the probe's grid.

What the records show (PyTorch 2.11, cuDNN 9.19, H200), with out = T*B*dirs*H*element, the
layer stack's output:
  reserve    exactly (6*layers - 1) * out for an LSTM and (7*layers - 1) * out for a GRU (plus
             at most 256 bytes), from forward to the end of backward;
  workspace  made and freed in forward and again, the same size, in each of backward's two
             calls; within one family (mode, directions, layers, element size, hidden, input
             width) affine in the tokens and the examples: base + per_token * T*B*d*e
             + per_example * B*d*e, where per_token depends on the mode, directions, hidden size
             and input width alone (not the layers nor the element size), and grows in a
             straight line with the hidden size on each side of a change of cuDNN's way between
             hidden sizes 192 and 224 (a one-directional LSTM's: about 21*H, then 5*H + I).
This fits that form (per_token shared across layers and element sizes, base and per_example
per family), prints the error of a sample of cases each left out of the fit, and the workspace
and reserve of each script's RNN as predicted against what cuDNN asked for there, the hidden
sizes and input widths off the grid interpolated in a straight line between the points on the
same side of that change (clamped past them). Then the compact form the GPU estimate keeps in
C++ (engine/allocator/cudnn_rnn.cpp): base = 8 MiB a layer and direction + the weights' bytes,
per_token from the hidden-size grid's table (printed as the C++ rows), per_example = k *
layers * hidden, k fitted for each mode, directions and side of the change (printed too).

    bench/gpu/fit_cudnn_rnn.py PROBE.json[.xz][,PROBE...] SNAPSHOT_DIR
"""
import bisect
import collections
import gzip
import json
import lzma
import pickle
import statistics
import sys

import numpy as np


def forward_buffers(events):
    """(workspace, reserve) of a case's forward: its last block freed within forward, and the
    last block it keeps."""
    forward = [e for e in events if e[3] == "forward"]
    freed = {e[1] for e in forward if e[0] == "free_completed"}
    allocs = [e for e in forward if e[0] == "alloc"]
    return ([e[2] for e in allocs if e[1] in freed][-1],
            [e[2] for e in allocs if e[1] not in freed][-1])


def read_cases(path):
    opener = lzma.open if path.endswith(".xz") else open
    with opener(path, "rt") as stream:
        probe = json.load(stream)
    cases = []
    for case in probe.get("rnn", []) + [dict(c, grid="rnn-hidden")
                                        for c in probe.get("rnn-hidden", [])]:
        if isinstance(case.get("events"), list):
            case["workspace"], case["reserve"] = forward_buffers(case["events"])
            case["element"] = 2 if case["precision"] == "fp16" else 4
            case["directions"] = 2 if case["bidirectional"] else 1
            cases.append(case)
    return probe, cases


def scale(case):
    return case["directions"] * case["element"]


def output_bytes(case):
    return case["batch"] * case["length"] * scale(case) * case["hidden"]


def reserve_of(case):
    per_layer = 6 if case["mode"] == "LSTM" else 7
    return (per_layer * case["layers"] - 1) * output_bytes(case)


def group_of(case):  # what k_token depends on
    return case["mode"], case["directions"], case["hidden"], case["features"]


def family_of(case):
    return group_of(case) + (case["layers"], case["element"])


def fit(cases):
    """Least squares of every case's workspace: per group a k_token, per family a base and a
    k_example. Returns ({group: k_token}, {family: (base, k_example)})."""
    groups = sorted({group_of(c) for c in cases})
    families = sorted({family_of(c) for c in cases})
    column = {g: i for i, g in enumerate(groups)}
    column.update({f: len(groups) + 2 * i for i, f in enumerate(families)})
    matrix = np.zeros((len(cases), len(groups) + 2 * len(families)))
    for row, case in enumerate(cases):
        matrix[row, column[group_of(case)]] = case["batch"] * case["length"] * scale(case)
        matrix[row, column[family_of(case)]] = 1
        matrix[row, column[family_of(case)] + 1] = case["batch"] * scale(case)
    wanted = np.array([c["workspace"] for c in cases], float)
    solution = np.linalg.lstsq(matrix, wanted, rcond=None)[0]
    return ({g: solution[column[g]] for g in groups},
            {f: (solution[column[f]], solution[column[f] + 1]) for f in families})


SWITCH = 208  # a hidden size between the last of cuDNN's small-hidden way and the first of its other


def interpolated(table, point):
    """table's value at `point` (mode, directions, hidden, input, ...), its keys of the same
    form: between the recorded hidden sizes and input widths around it, in a straight line,
    clamped past the ends."""
    fixed = point[:2] + point[4:]

    def between(known, x):
        # cuDNN changes its way between hidden sizes 192 and 224 (per token 21*H bytes, then
        # 5*H, for a one-directional LSTM): the points on x's side of that are used alone.
        same_side = [k for k in known if (k > SWITCH) == (x > SWITCH)]
        known = sorted(same_side or known)
        x = min(max(x, known[0]), known[-1])
        above = bisect.bisect_left(known, x)
        below = above if known[above] == x else above - 1
        return known[below], known[above], x

    def along_input(hidden):
        low, high, x = between({k[3] for k in table if k[:2] + k[4:] == fixed and k[2] == hidden},
                               point[3])
        ends = [np.asarray(table[point[:2] + (hidden, width) + point[4:]], float)
                for width in (low, high)]
        return ends[0] if high == low else ends[0] + (ends[1] - ends[0]) * (x - low) / (high - low)

    low, high, x = between({k[2] for k in table if k[:2] + k[4:] == fixed}, point[2])
    ends = [along_input(hidden) for hidden in (low, high)]
    return ends[0] if high == low else ends[0] + (ends[1] - ends[0]) * (x - low) / (high - low)


def predict(k_token, families, case):
    point = (case["mode"], case["directions"], case["hidden"], case["features"],
             case["layers"], case["element"])
    token = interpolated(k_token, point[:4])
    base, example = interpolated(families, point)
    return (base + token * case["batch"] * case["length"] * scale(case)
            + example * case["batch"] * scale(case))


def script_rnns(snapshot_dir):
    """The scripts' RNNs as cpu_estimate.py builds them, and the workspace and reserve of their
    first forward as recorded: (name, case) pairs."""
    shapes = {"bilstm": dict(mode="LSTM", layers=1, bidirectional=True, batch=64, length=128,
                             features=256, hidden=512),
              "gru": dict(mode="GRU", layers=2, bidirectional=False, batch=48, length=96,
                          features=200, hidden=384),
              "lstm2": dict(mode="LSTM", layers=2, bidirectional=False, batch=32, length=160,
                            features=128, hidden=320),
              "bigru": dict(mode="GRU", layers=1, bidirectional=True, batch=40, length=None,
                            features=300, hidden=256)}
    found = []
    for name, case in shapes.items():
        with gzip.open(f"{snapshot_dir}/cuda-{name}.pickle.gz") as stream:
            trace = pickle.load(stream)["device_traces"][0]
        case = dict(case, element=4, precision="fp32", directions=2 if case["bidirectional"] else 1)
        # The first forward's allocations inside _cudnn_rnn, to its first free: the last two
        # are its workspace and its reserve.
        made = []
        for entry in trace:
            names = " ".join(frame["name"] for frame in entry.get("frames", []))
            if entry["action"] == "alloc" and "_cudnn_rnn(" in names and "backward" not in names:
                made.append(entry["size"])
            elif made and entry["action"] == "free_completed":
                break
        case["workspace_recorded"], case["reserve_recorded"] = made[-2], made[-1]
        if case["length"] is None:  # the batch's length varies: read from the reserve
            per_layer = 6 if case["mode"] == "LSTM" else 7
            case["length"] = (made[-1] // (per_layer * case["layers"] - 1)) // (
                case["batch"] * scale(case) * case["hidden"])
        found.append((name, case))
    return found


def weight_bytes(case):
    gates = 4 if case["mode"] == "LSTM" else 3
    hidden, directions = case["hidden"], case["directions"]
    return sum(directions * gates * hidden * (hidden + (case["features"] if layer == 0 else
                                                      directions * hidden)) * case["element"]
               for layer in range(case["layers"]))


def compact(cases, hidden_grid):
    """The C++ model's form: its per-token table (from `hidden_grid`'s cases), its per-example
    k by (mode, directions, past the change), and its prediction of a case."""
    per_token, _ = fit(hidden_grid)
    base = lambda c: 8 * 2**20 * c["layers"] * c["directions"] + weight_bytes(c)
    tokens = lambda c: interpolated(per_token, group_of(c)) * c["batch"] * c["length"] * scale(c)
    examples = lambda c: c["layers"] * c["batch"] * c["hidden"] * scale(c)
    k = {}
    for key in {(c["mode"], c["directions"], c["hidden"] > SWITCH) for c in cases}:
        chosen = [c for c in cases if (c["mode"], c["directions"], c["hidden"] > SWITCH) == key]
        rest = np.array([c["workspace"] - base(c) - tokens(c) for c in chosen], float)
        k[key] = float(np.linalg.lstsq(np.array([[examples(c)] for c in chosen], float), rest,
                                       rcond=None)[0][0])
    model = lambda c: base(c) + tokens(c) + k[(c["mode"], c["directions"],
                                                 c["hidden"] > SWITCH)] * examples(c)
    return per_token, k, model


def main():
    probe, cases = {}, []
    for path in sys.argv[1].split(","):
        probe_of_path, read = read_cases(path)
        probe.update(probe_of_path)
        cases += read
    print(f"{len(cases)} RNN cases recorded with PyTorch {probe['torch']}, cuDNN {probe['cudnn']}"
          f" on {probe['gpu']}")
    off = [c["reserve"] - reserve_of(c) for c in cases]
    print(f"reserve = (6 or 7 * layers - 1) * output: {sum(0 <= d <= 256 for d in off)} of "
          f"{len(cases)} within 256 bytes")
    k_token, families = fit(cases)
    errors = []
    by_family = collections.defaultdict(list)
    for case in cases:
        by_family[family_of(case)].append(case)
    for case in cases[::4]:  # a quarter of them: each is a fit of its own
        kept = [c for c in by_family[family_of(case)] if c is not case]
        if len(kept) < 2:
            continue
        table = fit([c for c in cases if c is not case])
        errors.append(predict(*table, case) / case["workspace"] - 1)
    magnitudes = sorted(abs(e) for e in errors)
    print(f"workspace, each of {len(errors)} cases left out of the fit (every fourth with two "
          f"more of its family): median {statistics.median(magnitudes):.2%}, 90th percentile "
          f"{magnitudes[int(0.9 * len(magnitudes))]:.2%}, largest {magnitudes[-1]:.1%}")
    hidden_grid = [c for c in cases if c.get("grid") == "rnn-hidden"]
    if hidden_grid:
        per_token, k, model = compact(cases, hidden_grid)
        errors = sorted(abs(model(c) / c["workspace"] - 1) for c in cases)
        print(f"the C++ form over all {len(cases)}: median {statistics.median(errors):.2%}, 90th "
              f"percentile {errors[int(0.9 * len(errors))]:.2%}, largest {errors[-1]:.1%}")
        rows = collections.defaultdict(dict)
        for (mode, directions, hidden, width), value in per_token.items():
            rows[(mode == "GRU", directions, hidden)][width] = value
        for (gru, directions, hidden), widths in sorted(rows.items()):
            print(f"    {{{str(gru).lower()}, {directions}, {hidden}, {widths[64]:.0f}, "
                  f"{widths[300]:.0f}}},")
        for (mode, directions, large), value in sorted(k.items()):
            print(f"per example, {mode} {directions} direction(s), hidden "
                  f"{'>' if large else '<='} {SWITCH}: {value:.2f}")
    if len(sys.argv) > 2:
        for name, case in script_rnns(sys.argv[2]):
            workspace = predict(k_token, families, case)
            print(f"{name:7} ({case['mode']}, {case['layers']} layers, {case['directions']} "
                  f"directions, B {case['batch']}, T {case['length']}, I {case['features']}, "
                  f"H {case['hidden']}): workspace {workspace / 2**20:7.1f} MiB predicted, "
                  f"{case['workspace_recorded'] / 2**20:7.1f} recorded "
                  f"({workspace / case['workspace_recorded'] - 1:+.1%}); reserve "
                  f"{reserve_of(case) / 2**20:7.1f} / {case['reserve_recorded'] / 2**20:7.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
