#!/usr/bin/env python3
"""A snapshot written field by field as torch.cuda._memory_viz._profile_to_snapshot writes one
from a CPU profile (PyTorch 2.x, on a machine without CUDA): one trace, the CPU's, numbered after
the CUDA devices; each allocation with PyTorch's category of the tensor and the profiler's
Python frames ("train.py(12): step", filename "none", line 0); one segment spanning the
addresses of the tensors alive at the end, whose blocks have no addresses. No torch needed.

The step: a parameter of 4 MiB made before the profile began, its gradient (4 MiB), Adam's two
states (4 MiB each), an activation of 8 MiB freed after the backward, and a temporary of 1 MiB.

    make_profile_snapshot.py OUT.pickle
"""
import pickle
import sys

MiB = 1 << 20
HEAP = 0x5600_0000_0000  # the CPU heap; mmap'd tensors sit far from it
MAPPED = 0x7F00_0000_0000


def frames(line, name):
    return [{"filename": "none", "line": 0, "name": "<built-in method empty>"},
            {"filename": "none", "line": 0, "name": "torch/nn/modules/module.py(1783): _call_impl"},
            {"filename": "none", "line": 0, "name": f"train.py({line}): {name}"},
            {"filename": "none", "line": 0, "name": "train.py(0): <module>"}]


trace = []


def alloc(addr, size, category, line, name):
    entry = {"action": "alloc", "addr": addr, "size": size, "stream": 0,
             "frames": frames(line, name), "category": category}
    trace.append(entry)
    return entry


def free(entry):
    for action in ("free_requested", "free_completed"):
        trace.append({"action": action, "addr": entry["addr"], "size": entry["size"],
                      "stream": 0, "frames": entry["frames"]})


activation = alloc(MAPPED, 8 * MiB, "activation", 12, "forward")
temporary = alloc(HEAP, 1 * MiB, "temporary", 13, "step")
gradient = alloc(MAPPED + 16 * MiB, 4 * MiB, "gradient", 13, "step")
free(temporary)
free(activation)
exp_avg = alloc(MAPPED + 32 * MiB, 4 * MiB, "optimizer_state", 14, "step")
exp_avg_sq = alloc(MAPPED + 48 * MiB, 4 * MiB, "optimizer_state", 14, "step")
unknown = alloc(HEAP + 2 * MiB, 64, "unknown", 15, "step")

# The tensors alive at the end, the parameter (made before the profile) among them.
parameter = (MAPPED + 64 * MiB, 4 * MiB, frames(5, "<module>"))
alive = sorted([(e["addr"], e["size"], e["frames"]) for e in (gradient, exp_avg, exp_avg_sq,
                                                               unknown)] + [parameter])
start, blocks, last = alive[0][0], [], alive[0][0]
for addr, size, stack in alive:
    if last < addr:
        blocks.append({"size": addr - last, "state": "inactive"})
    blocks.append({"size": size, "state": "active_allocated", "requested_size": size,
                   "frames": stack})
    last = addr + size
snapshot = {"device_traces": [trace],
            "segments": [{"device": 0, "address": start, "total_size": last - start,
                          "stream": 0, "blocks": blocks}]}
with open(sys.argv[1], "wb") as out:
    pickle.dump(snapshot, out)
