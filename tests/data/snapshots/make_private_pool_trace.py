#!/usr/bin/env python3
"""A snapshot with a trace, written field by field as PyTorch 2.11 writes one
(torch.cuda.memory._snapshot() after _record_memory_history()), where a private pool decides
what is reserved; no GPU or torch needed.

A private pool (1, 2), as a captured CUDA graph or a torch.cuda.MemPool has, opens a 20 MiB
segment for a 6 MiB request. Then an 8 MiB request of the default pool would fit in the 14 MiB
that segment has free, but a private pool's segments serve only its own requests: the
allocator opens a second 20 MiB segment. Reserved: 40 MiB. Trace entries name no pool; the
segments at the end do (segment_pool_id).

    make_private_pool_trace.py OUT.pickle
"""
import pickle
import sys

MiB = 1 << 20
POOL_SEGMENT = 0x7F00_0000_0000
DEFAULT_SEGMENT = 0x7F00_0200_0000
FRAMES = [{"filename": "train.py", "line": 30, "name": "step"}]


def event(action, addr, size):
    return {"action": action, "addr": addr, "size": size, "stream": 0, "frames": FRAMES,
            "time_us": 1_000 + addr % 997}


def segment(address, pool, used):
    return {"device": 0, "address": address, "total_size": 20 * MiB,
            "allocated_size": used, "active_size": used, "requested_size": used, "stream": 0,
            "segment_type": "large", "segment_pool_id": pool, "is_expandable": False,
            "frames": FRAMES,
            "blocks": [{"address": address, "size": used, "requested_size": used,
                        "state": "active_allocated", "frames": FRAMES},
                       {"address": address + used, "size": 20 * MiB - used,
                        "requested_size": 0, "state": "inactive", "frames": []}]}


trace = [event("segment_alloc", POOL_SEGMENT, 20 * MiB),
         event("alloc", POOL_SEGMENT, 6 * MiB),
         event("segment_alloc", DEFAULT_SEGMENT, 20 * MiB),
         event("alloc", DEFAULT_SEGMENT, 8 * MiB)]
snapshot = {"segments": [segment(POOL_SEGMENT, (1, 2), 6 * MiB),
                         segment(DEFAULT_SEGMENT, (0, 0), 8 * MiB)],
            "device_traces": [trace],
            "allocator_settings": {}}
with open(sys.argv[1], "wb") as out:
    pickle.dump(snapshot, out)
