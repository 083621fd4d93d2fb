#!/usr/bin/env python3
"""How fast this processor multiplies matrices in bf16 against fp32, on one thread, with the
PyTorch of the Python that runs it: the products of the engine's models at the suite's sizes
(a bilstm's gates, a transformer's feed-forward) and a square one, in GFLOP/s. Without
AVX-512 LibTorch has no vector kernel for bf16 products, and the ratio says how much slower a
bf16 run trains (docs/memory.md). Run it with the PyTorch to compare, e.g. Debian's
(/usr/bin/python3, python3-torch; with OPENBLAS_CORETYPE set as the engine sets it for this
processor, Haswell on AVX2, or fp32 runs OpenBLAS's oldest kernels) and PyTorch 2.11's
(scripts/torch_env.sh).

    OPENBLAS_CORETYPE=Haswell /usr/bin/python3 bench/bf16_matmul.py [--seconds 0.5]
"""
import argparse
import time

import torch

SHAPES = {  # name: (rows, inner, columns)
    "bilstm gates": (32, 178, 512),
    "transformer ffn": (32 * 24, 128, 256),
    "square 256": (256, 256, 256),
}


def gflops(rows, inner, columns, dtype, seconds):
    a = torch.randn(rows, inner, dtype=dtype)
    b = torch.randn(inner, columns, dtype=dtype)
    for _ in range(3):
        a @ b
    start, products = time.perf_counter(), 0
    while time.perf_counter() - start < seconds:
        a @ b
        products += 1
    return 2 * rows * inner * columns * products / (time.perf_counter() - start) / 1e9


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=0.5, help="time per product and type")
    args = parser.parse_args()
    if args.seconds <= 0:
        parser.error(f"--seconds {args.seconds}: give a time above 0")
    torch.set_num_threads(1)
    print(f"PyTorch {torch.__version__}, one thread")
    print(f"{'product':16s} {'fp32 GFLOP/s':>13s} {'bf16 GFLOP/s':>13s} {'fp32/bf16':>10s}")
    for name, shape in SHAPES.items():
        fp32 = gflops(*shape, torch.float32, args.seconds)
        bf16 = gflops(*shape, torch.bfloat16, args.seconds)
        print(f"{name:16s} {fp32:13.2f} {bf16:13.2f} {fp32 / bf16:10.1f}")


if __name__ == "__main__":
    main()
