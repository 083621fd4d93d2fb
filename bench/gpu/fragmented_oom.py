"""A CUDA program that runs out of memory from fragmentation, for `oomlab-cli record --try`
(scripts/gpu_check.sh --try): under a 1 GiB memory fraction it fills the caching allocator's
20 MiB segments with 6 MiB tensors (three a segment), frees two of each three, and asks for
one tensor of 40 MiB. More than half of what is reserved is then free, in pieces of 14 MiB
that no request of 40 MiB fits and no segment wholly free to give back: the request fails
with "reserved but unallocated" far above it. With expandable_segments:True the free pages
are unmapped and mapped again at the end, and the same program should complete (written from
the caching allocator's rules; not yet run on a GPU: scripts/gpu_check.sh --try checks it).

    python3 fragmented_oom.py          (exit 0: it completed; an OutOfMemoryError otherwise)
"""
import sys

import torch

MIB = 1 << 20

if not torch.cuda.is_available():
    print("fragmented_oom.py: needs a CUDA device; nothing was run", file=sys.stderr)
    sys.exit(2)

torch.cuda.set_per_process_memory_fraction(
    (1 << 30) / torch.cuda.get_device_properties(0).total_memory)
tensors = [torch.empty(6 * MIB, dtype=torch.uint8, device="cuda") for _ in range(150)]
kept = tensors[::3]  # one of each segment's three: no segment is wholly free
del tensors
print(f"kept {len(kept)} tensors of 6 MiB; reserved {torch.cuda.memory_reserved() / MIB:.0f} MiB, "
      f"allocated {torch.cuda.memory_allocated() / MIB:.0f} MiB", flush=True)
large = torch.empty(40 * MIB, dtype=torch.uint8, device="cuda")
print(f"the 40 MiB tensor fits; reserved {torch.cuda.memory_reserved() / MIB:.0f} MiB", flush=True)
