#!/usr/bin/env python3
"""A snapshot written field by field as PyTorch 2.10 to 2.12 write them (torch.cuda.memory.
_snapshot(): segments with segment_pool_id, allocated_size, active_size and requested_size,
blocks with requested_size), for the reader's tests; no GPU or torch needed.

Device 0 has two segments of the default pool (0, 0) and one of a private pool (1, 2), as a
captured CUDA graph leaves them; its allocated blocks asked for less than they hold (the
allocator rounds requests up to 512 bytes, and a small request to its block).

    make_pools_snapshot.py OUT.pickle
"""
import pickle
import sys

MiB = 1 << 20


def block(address, size, requested, state):
    return {"address": address, "size": size, "requested_size": requested, "state": state,
            "frames": [{"filename": "train.py", "line": 12, "name": "step"}]}


def segment(address, pool, blocks, segment_type="large"):
    total = sum(b["size"] for b in blocks)
    allocated = sum(b["size"] for b in blocks if b["state"] == "active_allocated")
    return {"device": 0, "address": address, "total_size": total, "allocated_size": allocated,
            "active_size": allocated,
            "requested_size": sum(b["requested_size"] for b in blocks
                                  if b["state"] == "active_allocated"),
            "stream": 0, "segment_type": segment_type, "segment_pool_id": pool,
            "is_expandable": False, "frames": [], "blocks": blocks}


base = 0x7F0000000000
segments = [
    segment(base, (0, 0), [block(base, 8 * MiB, 8 * MiB - 300, "active_allocated"),
                           block(base + 8 * MiB, 12 * MiB, 0, "inactive")]),
    segment(base + 64 * MiB, (0, 0),
            [block(base + 64 * MiB, 2 * MiB, 1, "active_allocated")], "small"),
    segment(base + 128 * MiB, (1, 2),
            [block(base + 128 * MiB, 20 * MiB, 20 * MiB - 512, "active_allocated")]),
]
snapshot = {"segments": segments, "device_traces": [[]],
            "allocator_settings": {"expandable_segments": False}}
with open(sys.argv[1], "wb") as out:
    pickle.dump(snapshot, out, protocol=4)
