#!/usr/bin/env python3
"""The workspace cuDNN's LSTM asks for, as the estimator models it (engine/estimator/
cudnn_lstm.cpp), fitted to what bench/gpu/probe_device_memory.py recorded on a GPU.

Within a family of one element size, hidden size and input width, the workspace is exactly
affine in the batch's tokens and examples: base + per_token * B*L + per_example * B. This
prints each family's three numbers as the C++ table's rows, and each shape's error.

    bench/gpu/fit_cudnn_workspace.py PROBE.json
"""
import collections
import json
import sys


def buffers(trace):
    """(workspace, reserve) of a trace: the forward's first freed block is its workspace,
    the request after it the reserve kept for backward."""
    allocs = [event for event in trace["events"] if event[0] == "alloc"]
    first_free = next(event for event in trace["events"] if event[0] == "free_completed")
    at = next(i for i, event in enumerate(allocs) if event[1] == first_free[1])
    return allocs[at][2], allocs[at + 1][2]


def solve3(a, b):
    """Gaussian elimination for a 3x3 system."""
    m = [row[:] + [value] for row, value in zip(a, b)]
    for col in range(3):
        pivot = max(range(col, 3), key=lambda r: abs(m[r][col]))
        m[col], m[pivot] = m[pivot], m[col]
        for r in range(3):
            if r != col:
                f = m[r][col] / m[col][col]
                m[r] = [x - f * y for x, y in zip(m[r], m[col])]
    return [m[r][3] / m[r][r] for r in range(3)]


def fit(points):
    """Least squares of w = c0 + c1*tokens + c2*batch over (batch, length, w)."""
    rows = [[1.0, b * l, b] for b, l, _ in points]
    ata = [[sum(r[i] * r[j] for r in rows) for j in range(3)] for i in range(3)]
    atb = [sum(r[i] * w for r, (_, _, w) in zip(rows, points)) for i in range(3)]
    return solve3(ata, atb)


def main():
    probe = json.load(open(sys.argv[1]))
    families = collections.defaultdict(list)
    for trace in probe["cudnn_lstm"]:
        workspace, reserve = buffers(trace)
        element = 4 if trace["precision"] == "fp32" else 2
        states = trace["length"] * trace["batch"] * 2 * trace["hidden"] * element
        assert reserve == 5 * states + 256, (trace["batch"], trace["length"], reserve)
        key = (element, trace["hidden"], trace["features"])
        families[key].append((trace["batch"], trace["length"], workspace))
    print(f"// {probe['device']}, cuDNN {probe['cudnn']}, PyTorch {probe['torch']}")
    print("// element, hidden, input, base, per token, per example")
    worst = 0.0
    for (element, hidden, features), points in sorted(families.items()):
        if len(points) < 3:
            continue  # one shape: nothing to fit
        c0, c1, c2 = fit(points)
        print(f"    {{{element}, {hidden}, {features}, {round(c0)}, {round(c1)}, {round(c2)}}},")
        for b, l, w in points:
            worst = max(worst, abs(round(c0) + round(c1) * b * l + round(c2) * b - w) / w)
    print(f"// largest error on a recorded shape: {100 * worst:.2f}%", file=sys.stderr)


if __name__ == "__main__":
    main()
