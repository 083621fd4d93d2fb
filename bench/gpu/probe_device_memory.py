#!/usr/bin/env python3
"""What the estimator cannot read from tensor shapes alone, recorded on a CUDA GPU once:

  outside   the device memory no tensor holds (the CUDA context, cuBLAS's and cuDNN's handles,
            NCCL's buffers): NVML's used memory minus what the caching allocator reserved, after
            each library is first used, each in a fresh process;
  cudnn     every allocation PyTorch's cuDNN LSTM makes (the engine's layer: one bidirectional
            layer, batch first) in forward and backward, for a grid of shapes and precisions:
            the sizes cuDNN chooses (its workspace and reserve space) are read from these.

    bench/gpu/probe_device_memory.py OUT.json [--deadline SECONDS]

Without a GPU it says so and writes nothing. The grid stops at the deadline (default 90 s).
"""
import argparse
import ctypes
import itertools
import json
import subprocess
import sys
import time

from probe_kernels import events_of, write_report

MiB = 1 << 20


def nvml_used():
    """NVML's used bytes of device 0 (version 1 of nvmlMemory_t, as the engine reads it)."""
    class Memory(ctypes.Structure):
        _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong),
                    ("used", ctypes.c_ulonglong)]
    nvml = ctypes.CDLL("libnvidia-ml.so.1")
    assert nvml.nvmlInit_v2() == 0
    handle = ctypes.c_void_p()
    assert nvml.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(handle)) == 0
    memory = Memory()
    assert nvml.nvmlDeviceGetMemoryInfo(handle, ctypes.byref(memory)) == 0
    return memory.used


# The libraries a training step reaches, in the order the engine first uses them; each stage
# runs in a fresh process after the ones before it.
STAGES = ["context", "cublas", "cublaslt", "cudnn_lstm", "backward_thread", "nccl"]


def outside_stage(last):
    """Run in a child: uses the libraries up to `last`, prints the figures as JSON."""
    before = nvml_used()
    import torch
    device = torch.device("cuda", 0)
    stages = STAGES[:STAGES.index(last) + 1]
    x = torch.ones(1, device=device)
    if "cublas" in stages:
        a = torch.randn(256, 256, device=device)
        (a @ a).sum().item()
    if "cublaslt" in stages:
        torch.nn.functional.linear(a, a, torch.ones(256, device=device)).sum().item()
    if "cudnn_lstm" in stages:
        lstm = torch.nn.LSTM(50, 128, bidirectional=True, batch_first=True).to(device)
        lstm(torch.randn(4, 8, 50, device=device))[0].sum().item()
    if "backward_thread" in stages:
        w = torch.randn(256, 256, device=device, requires_grad=True)
        (w @ w).sum().backward()
    if "nccl" in stages:
        import torch.distributed as dist
        store = dist.HashStore()
        dist.init_process_group("nccl", store=store, rank=0, world_size=1,
                                device_id=device)
        t = torch.ones(1 << 20, device=device)
        dist.all_reduce(t)
        torch.cuda.synchronize()
    torch.cuda.synchronize()
    after = nvml_used()
    result = {"stage": last, "nvml_used_before": before, "nvml_used": after,
              "reserved": torch.cuda.memory_reserved(), "allocated": torch.cuda.memory_allocated(),
              "outside": after - before - torch.cuda.memory_reserved()}
    print(json.dumps(result), flush=True)
    if "nccl" in stages:
        torch.distributed.destroy_process_group()
    del x


def outside(python):
    results = []
    for stage in STAGES:
        done = subprocess.run([python, __file__, "--stage", stage], capture_output=True,
                              text=True, timeout=90)
        lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
        if done.returncode != 0 or not lines:
            results.append({"stage": stage, "error": done.stderr[-2000:]})
        else:
            results.append(json.loads(lines[-1]))
        print("outside", json.dumps(results[-1])[:300], flush=True)
    return results


def frame_names(frames):
    """The ATen and autograd functions of an allocation's C++ stack, innermost first."""
    names = []
    for frame in frames:
        name = frame.get("name", "")
        if any(part in name for part in ("at::native::", "cudnn", "autograd::", "at::_ops::")):
            names.append(name.split("(")[0][:90])
        if len(names) == 4:
            break
    return names


def lstm_trace(torch, batch, length, features, hidden, precision, cpp_stacks):
    """The allocator's events of one bidirectional batch-first LSTM layer's forward and
    backward, with weights and input made before the history starts."""
    device = torch.device("cuda")
    torch.manual_seed(0)
    lstm = torch.nn.LSTM(features, hidden, bidirectional=True, batch_first=True).to(device)
    x = torch.randn(batch, length, features, device=device, requires_grad=True)
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(precision)

    def forward():
        with torch.autocast("cuda", dtype=dtype or torch.float16, enabled=dtype is not None):
            return lstm(x)[0]
    events = events_of(torch, "cuda", forward, frame_names if cpp_stacks else None)
    return {"batch": batch, "length": length, "features": features, "hidden": hidden,
            "precision": precision, "events": events}


def cudnn(deadline):
    import torch
    results = []
    start = time.monotonic()
    # The engine's layers at the benchmark's shapes (GloVe 50d, hidden 128, TREC's batches),
    # with C++ stacks, then a grid with Python stacks only (their order and sizes suffice).
    canonical = [(32, 37, 50, 128, p) for p in ("fp32", "bf16", "fp16")] + \
                [(32, 37, 256, 128, p) for p in ("fp32", "bf16")]
    for shape in canonical:
        results.append(lstm_trace(torch, *shape, cpp_stacks=True))
        print("cudnn", shape, len(results[-1]["events"]), "events",
              f"{time.monotonic() - start:.1f}s", flush=True)
    grid = itertools.product((8, 16, 32, 64, 128), (8, 16, 37, 64, 128), (50, 300),
                             (64, 128, 256), ("fp32", "bf16"))
    for batch, length, features, hidden, precision in grid:
        if time.monotonic() - start > deadline:
            print("cudnn: deadline reached", flush=True)
            break
        results.append(lstm_trace(torch, batch, length, features, hidden, precision, False))
    print("cudnn", len(results), "traces", f"{time.monotonic() - start:.1f}s", flush=True)
    return results


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out", nargs="?")
    parser.add_argument("--deadline", type=float, default=90)
    parser.add_argument("--stage", choices=STAGES)
    args = parser.parse_args()
    if args.stage:
        outside_stage(args.stage)
        return 0
    import torch
    if not torch.cuda.is_available():
        print("probe_device_memory.py: no CUDA GPU here; nothing written")
        return 0
    report = {"torch": torch.__version__, "cuda": torch.version.cuda,
              "cudnn": torch.backends.cudnn.version(),
              "device": torch.cuda.get_device_name(0),
              "capability": list(torch.cuda.get_device_capability(0)),
              "total": torch.cuda.get_device_properties(0).total_memory,
              "outside": outside(sys.executable), "cudnn_lstm": cudnn(args.deadline)}
    write_report(args.out, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
