#!/usr/bin/env python3
"""One bidirectional LSTM layer's forward and backward on the CPU, with oneDNN's kernel and
with ATen's native one, in whatever PyTorch runs this: which kernels a PyTorch version has.

    bench/lstm_kernels.py [--threads 1] [--batch 32] [--length 24] [--hidden 128] [--input 50]
"""
import argparse
import time

import torch


def milliseconds_per_step(lstm, x, onednn, steps):
    torch.backends.mkldnn.enabled = onednn
    for _ in range(5):  # warm up
        out, _ = lstm(x)
        out.sum().backward()
    start = time.perf_counter()
    for _ in range(steps):
        out, _ = lstm(x)
        out.sum().backward()
    return (time.perf_counter() - start) / steps * 1000


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--length", type=int, default=24)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--input", type=int, default=50)
    parser.add_argument("--steps", type=int, default=60)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    lstm = torch.nn.LSTM(args.input, args.hidden, bidirectional=True)
    x = torch.randn(args.length, args.batch, args.input, requires_grad=True)
    print(f"PyTorch {torch.__version__}, oneDNN available: "
          f"{torch.backends.mkldnn.is_available()}, {args.threads} thread(s)")
    print(f"native: {milliseconds_per_step(lstm, x, False, args.steps):.2f} ms per step")
    print(f"oneDNN: {milliseconds_per_step(lstm, x, True, args.steps):.2f} ms per step")


if __name__ == "__main__":
    main()
