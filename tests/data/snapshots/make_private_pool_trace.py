#!/usr/bin/env python3
"""A snapshot with a trace, written field by field as PyTorch 2.11 writes one
(torch.cuda.memory._snapshot() after _record_memory_history()), where a private pool decides
what is reserved; no GPU or torch needed.

A private pool (1, 2), as a captured CUDA graph or a torch.cuda.MemPool has, opens a 20 MiB
segment for a 6 MiB request. Then an 8 MiB request of the default pool would fit in the 14 MiB
that segment has free, but a private pool's segments serve only its own requests: the
allocator opens a second 20 MiB segment. Reserved: 40 MiB. Trace entries name no pool; the
segments at the end do (segment_pool_id).

With --freed the pool's 6 MiB is freed before the default pool asks: its segment is then all
free, but still the pool's, which PyTorch never releases while the pool is held (to retry an
allocation on a device too small for both segments, for instance).

With --late the history was turned on after the pool had opened its segment and taken its
6 MiB: the trace holds only the default pool's events, and the pool is known from the segments.

With --gc-nan the allocator's settings hold a garbage_collection_threshold of nan, which
PyTorch refuses; with --past-eib 1,100 more segments of 1 PiB open first, past any machine.

    make_private_pool_trace.py OUT.pickle [--freed | --late] [--gc-nan] [--past-eib]
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
    blocks = [{"address": address, "size": used, "requested_size": used,
               "state": "active_allocated", "frames": FRAMES}] if used else []
    blocks.append({"address": address + used, "size": 20 * MiB - used, "requested_size": 0,
                   "state": "inactive", "frames": []})
    return {"device": 0, "address": address, "total_size": 20 * MiB,
            "allocated_size": used, "active_size": used, "requested_size": used, "stream": 0,
            "segment_type": "large", "segment_pool_id": pool, "is_expandable": False,
            "frames": FRAMES, "blocks": blocks}


freed = "--freed" in sys.argv[2:]
late = "--late" in sys.argv[2:]
PiB = 1 << 50
trace = [event("segment_alloc", (i + 1) << 51, PiB)
         for i in range(1100 if "--past-eib" in sys.argv[2:] else 0)]
trace += [] if late else [event("segment_alloc", POOL_SEGMENT, 20 * MiB),
                          event("alloc", POOL_SEGMENT, 6 * MiB)]
if freed:
    trace += [event("free_requested", POOL_SEGMENT, 6 * MiB),
              event("free_completed", POOL_SEGMENT, 6 * MiB)]
trace += [event("segment_alloc", DEFAULT_SEGMENT, 20 * MiB),
          event("alloc", DEFAULT_SEGMENT, 8 * MiB)]
snapshot = {"segments": [segment(POOL_SEGMENT, (1, 2), 0 if freed else 6 * MiB),
                         segment(DEFAULT_SEGMENT, (0, 0), 8 * MiB)],
            "device_traces": [trace],
            "allocator_settings": ({"garbage_collection_threshold": float("nan")}
                                   if "--gc-nan" in sys.argv[2:] else {})}
with open(sys.argv[1], "wb") as out:
    pickle.dump(snapshot, out)
