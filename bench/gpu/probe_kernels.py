#!/usr/bin/env python3
"""What the GPU's own kernels ask the caching allocator for, where a CPU run asks for something
else: the data the GPU estimate of a CPU run (engine/snapshot_reader/as_on_cuda.cpp) needs to
make a CPU's requests as CUDA makes them, recorded on a GPU for grids of shapes:

  rnn        cuDNN's LSTM and GRU (layers, directions, batch, length, widths, autocast):
             every allocation of forward and backward (cuDNN's workspace and reserve space)
  rnn-hidden the same over thirteen hidden sizes (64-1024), one layer in fp32
  conv       cuDNN's convolutions, 1-d and 2-d, as PyTorch picks them by default (no
             benchmarking): the workspaces of forward, the input's gradient and the weights'
  attention  scaled_dot_product_attention with and without masks, causal, dropout, in three
             precisions: which kernel PyTorch picked and what its forward keeps for backward

Each case is its shape and the allocator's events ([action, address, size, phase], the phase
forward, output gradient or backward).

    bench/gpu/probe_kernels.py OUT.json [--deadline SECONDS] [--device cuda|cpu] [--grid NAME]...

With --device cpu the grids run on the CPU without a history (a rehearsal of the script: the
shapes' code paths, no allocator events). Each grid stops at its share of the deadline.
"""
import argparse
import itertools
import json
import os
import random
import sys
import time


def events_of(torch, device, forward, frames=None):
    """The allocator's events of forward() (made outputs, a tensor or a tuple) and of a backward
    through them, phase by phase; with `frames` (a function of an entry's frames) C++ stacks
    are recorded too and what it makes of each is added to its event. On the CPU: runs both,
    records nothing."""
    if device == "cpu":
        outputs = forward()
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        torch.autograd.backward(outputs, [torch.ones_like(o) for o in outputs])
        return []
    torch.cuda.synchronize()
    allocations = lambda: torch.cuda.memory_stats().get("allocation.all.allocated", 0)
    # Turning the history off clears it: each trace holds this case's events alone.
    torch.cuda.memory._record_memory_history(max_entries=200000, context="all",
                                             stacks="all" if frames else "python")
    first = allocations()
    outputs = forward()
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    forward_end = allocations() - first
    gradients = [torch.randn_like(o) for o in outputs]
    backward_start = allocations() - first
    torch.autograd.backward(outputs, gradients)
    torch.cuda.synchronize()
    trace = torch.cuda.memory._snapshot()["device_traces"][0]
    torch.cuda.memory._record_memory_history(enabled=None)
    events, made = [], 0
    for entry in trace:
        if entry["action"] not in ("alloc", "free_completed"):
            continue
        made += entry["action"] == "alloc"
        phase = ("forward" if made <= forward_end else
                 "output gradient" if made <= backward_start else "backward")
        event = [entry["action"], entry["addr"], entry["size"], phase]
        events.append(event + [frames(entry.get("frames", []))] if frames else event)
    del outputs, gradients
    torch.cuda.empty_cache()
    return events


def autocast(torch, device, precision):
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(precision)
    return torch.autocast(device.split(":")[0], dtype=dtype or torch.bfloat16,
                          enabled=dtype is not None)


def rnn_case(torch, device, mode, layers, bidirectional, batch, length, features, hidden,
             precision):
    torch.manual_seed(0)
    layer = getattr(torch.nn, mode)(features, hidden, num_layers=layers, batch_first=True,
                                    bidirectional=bidirectional).to(device)
    x = torch.randn(batch, length, features, device=device, requires_grad=True)

    def forward():
        with autocast(torch, device, precision):
            return layer(x)[0]
    return events_of(torch, device, forward)


def conv_case(torch, device, dims, batch, channels, out_channels, kernel, stride, size,
              precision):
    torch.manual_seed(0)
    conv = (torch.nn.Conv1d if dims == 1 else torch.nn.Conv2d)(
        channels, out_channels, kernel, stride=stride, padding=kernel // 2).to(device)
    x = torch.randn(batch, channels, *([size] * dims), device=device, requires_grad=True)

    def forward():
        with autocast(torch, device, precision):
            return conv(x)
    return events_of(torch, device, forward)


def attention_case(torch, device, batch, heads, length, head_dim, precision, mask, dropout):
    torch.manual_seed(0)
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(precision, torch.float32)
    q, k, v = (torch.randn(batch, heads, length, head_dim, device=device, dtype=dtype,
                           requires_grad=True) for _ in range(3))
    kept = torch.randint(length // 2, length + 1, (batch, 1, 1, 1), device=device)
    padded = torch.arange(length, device=device).view(1, 1, 1, length) < kept
    attn_mask = {"none": None, "causal": None, "bool-padding": padded,
                 "float-padding": torch.zeros(batch, 1, 1, length, device=device,
                                              dtype=dtype).masked_fill(~padded, float("-inf")),
                 "float-square": torch.zeros(batch, 1, length, length, device=device,
                                             dtype=dtype).masked_fill(~padded, float("-inf"))}[mask]

    arguments = dict(attn_mask=attn_mask, dropout_p=dropout, is_causal=mask == "causal")

    def forward():
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, **arguments)
    # The kernel PyTorch picks (SDPBackend's value: 0 math, 1 flash, 2 efficient, 3 cuDNN).
    backend = int(torch._fused_sdp_choice(q, k, v, **arguments)) if device != "cpu" else None
    return {"backend": backend, "events": events_of(torch, device, forward)}


GRIDS = {
    "rnn": (rnn_case, ("mode", "layers", "bidirectional", "batch", "length", "features",
                       "hidden", "precision"),
            itertools.product(("LSTM", "GRU"), (1, 2, 3), (False, True), (8, 32, 96),
                              (16, 64, 200), (64, 300), (128, 384, 640), ("fp32", "fp16"))),
    # Where cuDNN's RNN workspace per token changes with the hidden size (one layer, fp32).
    "rnn-hidden": (rnn_case, ("mode", "layers", "bidirectional", "batch", "length", "features",
                              "hidden", "precision"),
                   itertools.product(("LSTM", "GRU"), (1,), (False, True), (8, 32, 96), (64, 200),
                                     (64, 300), (64, 96, 128, 160, 192, 224, 256, 320, 384, 448,
                                                 512, 768, 1024), ("fp32",))),
    "conv": (conv_case, ("dims", "batch", "channels", "out_channels", "kernel", "stride", "size",
                         "precision"),
             itertools.chain(
                 itertools.product((2,), (8, 32, 64), (3, 32, 64, 128, 256), (32, 64, 128, 256),
                                   (1, 3, 5, 7), (1, 2), (14, 32, 56, 112),
                                   ("fp32", "fp16", "bf16")),
                 itertools.product((1,), (32, 64), (50, 100, 300), (100, 256), (3, 4, 5), (1,),
                                   (32, 128, 400), ("fp32", "bf16")))),
    "attention": (attention_case, ("batch", "heads", "length", "head_dim", "precision", "mask",
                                   "dropout"),
                  itertools.product((8, 32), (4, 8, 12), (64, 128, 256, 512), (32, 64),
                                    ("fp32", "fp16", "bf16"),
                                    ("none", "causal", "bool-padding", "float-padding",
                                     "float-square"), (0.0, 0.1))),
}


def run_grid(torch, device, name, seconds, limit):
    """The grid's cases in a shuffled order (one seed) until its time is up."""
    case, keys, values = GRIDS[name]
    values = list(values)
    random.Random(7).shuffle(values)
    results, start = [], time.monotonic()
    for shape in values[:limit]:
        if time.monotonic() - start > seconds:
            print(f"{name}: its share of the deadline reached", flush=True)
            break
        shape_of = dict(zip(keys, shape))
        try:
            made = case(torch, device, **shape_of)
            made = made if isinstance(made, dict) else {"events": made}
        except RuntimeError as error:  # out of memory or a kernel refused: kept as such
            made = {"error": str(error)[:300]}
            if device != "cpu":
                torch.cuda.empty_cache()
        results.append(dict(shape_of, **made))
    print(f"{name}: {len(results)} of {len(values)} cases in {time.monotonic() - start:.1f} s",
          flush=True)
    return results


def write_report(path, report):
    with open(path, "w") as stream:
        json.dump(report, stream)
    print("written", path, os.path.getsize(path) // 1024, "KiB")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out")
    parser.add_argument("--deadline", type=float, default=120)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--limit", type=int, default=None, help="at most this many per grid")
    parser.add_argument("--grid", action="append", choices=sorted(GRIDS),
                        help="only these grids (repeatable; default: every one)")
    args = parser.parse_args()
    import torch
    if args.device != "cpu" and not torch.cuda.is_available():
        print("probe_kernels.py: no CUDA GPU here; nothing written")
        return 0
    if args.device == "cpu":
        torch.set_num_threads(2)
    report = {"torch": torch.__version__, "device": args.device}
    if args.device != "cpu":
        report.update(cuda=torch.version.cuda, cudnn=torch.backends.cudnn.version(),
                      gpu=torch.cuda.get_device_name(0))
    grids = args.grid or list(GRIDS)
    for name in grids:
        report[name] = run_grid(torch, args.device, name, args.deadline / len(grids), args.limit)
    write_report(args.out, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
