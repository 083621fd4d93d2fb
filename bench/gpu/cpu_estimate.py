"""The GPU estimate of a CPU run against the GPU itself: five small training scripts of
different shapes, each run on the CPU under PyTorch's profiler (the memory events `oomlab-cli
record` keeps without CUDA) and read by `oomlab-cli snapshot show --json` for its
"gpu_estimate", then, where CUDA is there, run on the GPU for the caching allocator's own most
reserved (torch.cuda.max_memory_reserved). Prints a table and writes it as JSON.

    cpu_estimate.py CLI OUT_DIR [--steps N]

The CPU part runs anywhere (a rehearsal without a GPU prints the estimates alone).
"""
import argparse
import json
import pathlib
import subprocess
import sys

import torch
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile


def mlp():
    return nn.Sequential(nn.Linear(1024, 4096), nn.ReLU(), nn.Linear(4096, 4096), nn.ReLU(),
                         nn.Linear(4096, 10)), lambda d: torch.randn(256, 1024, device=d)


def cnn():
    return nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 128, 3, padding=1),
                         nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, 10)), \
        lambda d: torch.randn(32, 3, 64, 64, device=d)


class Lstm(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(20000, 256)
        self.lstm = nn.LSTM(256, 512, batch_first=True, bidirectional=True)
        self.out = nn.Linear(1024, 10)

    def forward(self, ids):
        hidden, _ = self.lstm(self.embed(ids))
        return self.out(hidden.mean(1))


def lstm():
    return Lstm(), lambda d: torch.randint(0, 20000, (64, 128), device=d)


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(30000, 256)
        layer = nn.TransformerEncoderLayer(256, 8, 1024, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 4)
        self.out = nn.Linear(256, 10)

    def forward(self, ids):
        return self.out(self.encoder(self.embed(ids)).mean(1))


def transformer():
    return Encoder(), lambda d: torch.randint(0, 30000, (32, 256), device=d)


class Bag(nn.Module):
    def __init__(self):
        super().__init__()
        self.bag = nn.EmbeddingBag(400000, 100, mode="mean")
        self.out = nn.Linear(100, 10)

    def forward(self, ids):
        return self.out(self.bag(ids))


def bag():
    return Bag(), lambda d: torch.randint(0, 400000, (512, 64), device=d)


SHAPES = {"mlp": mlp, "cnn": cnn, "bilstm": lstm, "transformer": transformer, "bag": bag}


def train(shape, device, steps):
    torch.manual_seed(0)
    model, batch = SHAPES[shape]()
    model = model.to(device)
    optimizer = torch.optim.Adam(model.parameters())
    for _ in range(steps):
        loss = nn.functional.cross_entropy(model(batch(device)),
                                           torch.randint(0, 10, (batch(device).shape[0],),
                                                         device=device))
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("cli")
    parser.add_argument("out", type=pathlib.Path)
    parser.add_argument("--steps", type=int, default=3)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(2)
    rows = []
    for shape in SHAPES:
        trace = args.out / f"cpu-{shape}.json"
        with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
            train(shape, "cpu", args.steps)
        prof.export_chrome_trace(str(trace))
        shown = json.loads(subprocess.run([args.cli, "snapshot", "show", str(trace), "--json"],
                                          check=True, capture_output=True, text=True).stdout)
        cpu = next(d for d in shown["devices"] if d["device"] == -1)
        row = {"shape": shape, "cpu_peak_allocated": cpu["peak_allocated_bytes"],
               "estimate_reserved": cpu["gpu_estimate"]["peak_reserved_bytes"]}
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_stats()
            train(shape, "cuda", args.steps)
            torch.cuda.synchronize()
            row["gpu_peak_allocated"] = torch.cuda.max_memory_allocated()
            row["gpu_reserved"] = torch.cuda.max_memory_reserved()
            row["error"] = row["estimate_reserved"] / row["gpu_reserved"] - 1
            torch.cuda.empty_cache()
        rows.append(row)
        mib = lambda key: f"{row[key] / 2**20:9.1f}" if key in row else f"{'-':>9}"
        print(f"{shape:12} CPU peak {mib('cpu_peak_allocated')} MiB  estimate "
              f"{mib('estimate_reserved')} MiB  GPU allocated {mib('gpu_peak_allocated')} MiB  "
              f"reserved {mib('gpu_reserved')} MiB  error "
              + (f"{row['error']:+.1%}" if "error" in row else "-"), flush=True)
    (args.out / "cpu-estimate.json").write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    sys.exit(main())
