#!/usr/bin/env python3
"""Real CUDA memory snapshots, recorded by PyTorch itself from a small transformer classifier
trained on random token batches of varying length: the allocator's whole trace from the first
allocation, under several PYTORCH_CUDA_ALLOC_CONF settings, and two runs that end out of memory
(their snapshot written at the OOM by an out-of-memory observer, with Python stacks).

They are what the allocator model (engine/allocator) is checked against: replaying each trace's
alloc and free events must open the segments the real allocator opened.

    bench/gpu/record_snapshots.py OUT_DIR [--only NAME] [--timeout SECONDS]

Writes OUT_DIR/NAME.pickle and OUT_DIR/NAME.json (settings, versions, torch.cuda.memory_stats
at the end, and the OOM message where there was one) for each scenario, each in a process of its
own, since the allocator reads its settings once. Needs a CUDA GPU; without one it says so and
writes nothing.
"""
import os
import sys
import time

import snapshot_scenarios

# name: (PYTORCH_CUDA_ALLOC_CONF, what the run does)
SCENARIOS = {
    "train-default": ("", "train"),
    "train-expandable": ("expandable_segments:True", "train"),
    "train-max-split-64": ("max_split_size_mb:64", "train"),
    "train-roundup-4": ("roundup_power2_divisions:4", "train"),
    "train-gc-0.6": ("garbage_collection_threshold:0.6", "train-capped"),
    "train-side-stream": ("", "train-side-stream"),
    "oom-default": ("", "oom"),
    "oom-expandable": ("expandable_segments:True", "oom"),
}
CAP_BYTES = 3 << 30  # the memory fraction of the capped runs: about 3 GiB of the device


def build_model(torch, vocab, dim, layers):
    layer = torch.nn.TransformerEncoderLayer(d_model=dim, nhead=8, dim_feedforward=4 * dim,
                                             batch_first=True)
    return torch.nn.Sequential(torch.nn.Embedding(vocab, dim),
                               torch.nn.TransformerEncoder(layer, num_layers=layers))


def train(torch, mode, steps, seed=7):
    """Steps of a text classifier on batches whose length changes each step, as padded text
    batches do: the allocator sees many sizes, splits blocks and opens segments."""
    device = torch.device("cuda")
    generator = torch.Generator().manual_seed(seed)
    vocab, dim, classes = 20000, 512, 6
    encoder = build_model(torch, vocab, dim, 4).to(device)
    head = torch.nn.Linear(dim, classes).to(device)
    optimizer = torch.optim.AdamW(list(encoder.parameters()) + list(head.parameters()), lr=1e-4)
    side = torch.cuda.Stream() if mode == "train-side-stream" else None
    batch = 64
    for step in range(steps):
        length = int(torch.randint(16, 257, (1,), generator=generator))
        if mode == "oom":
            batch = 32 * (step + 1)  # grows until the capped device cannot hold a step
        tokens = torch.randint(vocab, (batch, length), generator=generator)
        labels = torch.randint(classes, (batch,), generator=generator)
        if side is not None:  # copied on a side stream, used on the main one
            with torch.cuda.stream(side):
                tokens, labels = tokens.to(device, non_blocking=True), labels.to(device)
            torch.cuda.current_stream().wait_stream(side)
            tokens.record_stream(torch.cuda.current_stream())
            labels.record_stream(torch.cuda.current_stream())
        else:
            tokens, labels = tokens.to(device), labels.to(device)
        logits = head(encoder(tokens).mean(dim=1))
        loss = torch.nn.functional.cross_entropy(logits, labels)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if step == steps // 2 and mode != "oom":
            torch.cuda.empty_cache()  # a release the trace records as segment_free events
    torch.cuda.synchronize()


def record(name, out_dir):
    """One scenario, in this process (the allocator settings are already in the environment)."""
    import torch
    conf, mode = SCENARIOS[name]
    pickle_path = os.path.join(out_dir, f"{name}.pickle")
    summary = {"scenario": name, "alloc_conf": conf, "mode": mode, "torch": torch.__version__,
               "cuda": torch.version.cuda, "device": torch.cuda.get_device_name(0),
               "device_bytes": torch.cuda.get_device_properties(0).total_memory}
    oom = mode == "oom"
    if mode in ("oom", "train-capped"):
        torch.cuda.set_per_process_memory_fraction(CAP_BYTES / summary["device_bytes"])
        summary["memory_fraction_bytes"] = CAP_BYTES
    # Without stacks the traces stay small and complete; the OOM runs keep Python stacks, so a
    # reader can say which source line held the memory.
    if oom:
        torch.cuda.memory._record_memory_history("all", context="all", stacks="python",
                                                 max_entries=200000)

        def dump_at_oom(device, alloc, device_alloc, device_free):
            torch.cuda.memory._dump_snapshot(pickle_path)
        torch._C._cuda_attach_out_of_memory_observer(dump_at_oom)
    else:
        torch.cuda.memory._record_memory_history("all", context=None, max_entries=1000000)
    started = time.monotonic()
    try:
        train(torch, mode, steps=40 if oom else 60)
    except torch.OutOfMemoryError as error:
        summary["oom_message"] = str(error)
    summary["seconds"] = round(time.monotonic() - started, 2)
    if not oom:
        torch.cuda.memory._dump_snapshot(pickle_path)
    snapshot_scenarios.write_summary(torch, summary, out_dir, name)


if __name__ == "__main__":
    sys.exit(snapshot_scenarios.main(__file__, __doc__.split("\n\n")[0],
                                     {name: conf for name, (conf, _) in SCENARIOS.items()},
                                     record, jobs=1, timeout=60))
