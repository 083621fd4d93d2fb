#!/usr/bin/env python3
"""cuDNN's convolution workspaces fitted to what bench/gpu/probe_kernels.py recorded on a GPU
(its `conv` grid: 1-d and 2-d, with PyTorch's default choice of cuDNN's way).

What the records show (PyTorch 2.11, cuDNN 9.19, H200): each call asks for one workspace in
forward, and backward one for the input's gradient and one for the weights', each made and
freed inside the call. Their sizes follow what cuDNN's kernels for channels-last tensors need:
a copy of the input (its channels padded to a multiple of 8 in half precision) and of the
output (or its gradient), io = input + output bytes. Most calls ask for about io; some ask for
the input's copy alone or for nothing (a 1x1 convolution of stride 1, a GEMM on the tensors as
they are, asks for none); which one cuDNN's heuristics pick depends on the shape in ways the
grid does not pin down. So the model is a multiple of io for each dimensionality, kernel size,
stride, element size (fp16 and bf16 together) and whether the input has under 8 channels (a
network's first layer): the median of the recorded multiples weighted by io, so that the
shapes whose workspaces are large, the ones that matter to a peak, decide it.

This prints each group's three multiples as the C++ rows the GPU estimate keeps
(engine/allocator/cudnn_conv.cpp), and the model's error over the grid, each case left out of
its group's median: per case relative to what was asked for, relative to io (what the error
is worth beside the tensors the call holds anyway), and all the bytes mispredicted against all
the bytes asked for.

    bench/gpu/fit_cudnn_conv.py PROBE.json[.xz]
"""
import collections
import json
import lzma
import statistics
import sys

WORKSPACES = ("forward", "backward_input", "backward_weight")


def element_bytes(case):
    return 4 if case["precision"] == "fp32" else 2


def padded_channels(case):
    channels = case["channels"]
    return channels if case["precision"] == "fp32" else (channels + 7) // 8 * 8


def io_bytes(case):
    """The input (channels padded as cuDNN pads them) and the output, in bytes."""
    kernel, stride, size = case["kernel"], case["stride"], case["size"]
    out_size = (size + 2 * (kernel // 2) - kernel) // stride + 1
    positions_in = case["batch"] * size ** case["dims"]
    positions_out = case["batch"] * out_size ** case["dims"]
    return element_bytes(case) * (positions_in * padded_channels(case) +
                                  positions_out * case["out_channels"])


def workspaces(case):
    """The largest block made and freed in forward; in backward, the largest made and freed
    before the weights' gradient was made (the input's), and after it (the weights')."""
    weight = (case["out_channels"] * case["channels"] * case["kernel"] ** case["dims"] *
              element_bytes(case))
    forward = [e for e in case["events"] if e[3] == "forward"]
    freed = {e[1] for e in forward if e[0] == "free_completed"}
    found = {"forward": max([e[2] for e in forward if e[0] == "alloc" and e[1] in freed],
                            default=0), "backward_input": 0, "backward_weight": 0}
    alive, weights_made, first = {}, False, True
    for action, address, size, phase in case["events"]:
        if phase != "backward":
            continue
        if action == "alloc":
            weights_made |= not first and size == weight
            alive[address] = "backward_weight" if weights_made else "backward_input"
            first = False
        elif address in alive:
            which = alive.pop(address)
            found[which] = max(found[which], size)
    return found


def group_of(case):
    return (case["dims"], case["kernel"], case["stride"], element_bytes(case),
            case["channels"] < 8)


def read_cases(path):
    opener = lzma.open if path.endswith(".xz") else open
    with opener(path, "rt") as stream:
        probe = json.load(stream)
    cases = [dict(c, io=io_bytes(c), **workspaces(c)) for c in probe["conv"]
             if isinstance(c.get("events"), list)]
    return probe, cases


def weighted_median(pairs):
    """The median of (value, weight) pairs by weight."""
    pairs = sorted(pairs)
    half, seen = sum(weight for _, weight in pairs) / 2, 0
    for value, weight in pairs:
        seen += weight
        if seen >= half:
            return value
    return 0.0


def multiple(members, which):
    return weighted_median([(c[which] / c["io"], c["io"]) for c in members])


def quantiles(values):
    values = sorted(values)
    return (f"median {statistics.median(values):.1%}, 75th percentile "
            f"{values[len(values) * 3 // 4]:.1%}, 90th {values[len(values) * 9 // 10]:.1%}, "
            f"within 10% {sum(v <= 0.1 for v in values) / len(values):.0%}")


def main():
    probe, cases = read_cases(sys.argv[1])
    groups = collections.defaultdict(list)
    for case in cases:
        groups[group_of(case)].append(case)
    print(f"{len(cases)} convolutions recorded with PyTorch {probe['torch']}, cuDNN "
          f"{probe['cudnn']} on {probe['gpu']}, {len(groups)} groups")
    for which in WORKSPACES:
        relative, of_io, missed = [], [], 0
        for case in cases:
            others = [o for o in groups[group_of(case)] if o is not case]
            predicted = multiple(others, which) * case["io"] if others else 0
            asked = case[which]
            relative.append(abs(predicted - asked) / asked if asked else float(predicted > 0))
            of_io.append(abs(predicted - asked) / case["io"])
            missed += abs(predicted - asked)
        print(f"{which}, each case left out of its group: relative to what it asked for "
              f"{quantiles(relative)}; relative to io {quantiles(of_io)}; bytes mispredicted "
              f"{missed / sum(c[which] for c in cases):.1%} of those asked for")
    print("// dims, kernel, stride, element, under 8 channels: forward, backward's input, "
          "weights (x io)")
    for (dims, kernel, stride, element, narrow), members in sorted(groups.items()):
        multiples = [multiple(members, w) for w in WORKSPACES]
        print(f"    {{{dims}, {kernel}, {stride}, {element}, {str(narrow).lower()}, "
              + ", ".join(f"{m:.2f}" for m in multiples) + f"}},  // {len(members)} cases")


if __name__ == "__main__":
    main()
