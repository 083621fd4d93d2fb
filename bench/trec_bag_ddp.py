#!/usr/bin/env python3
"""The reference for bench/ddp_compare.sh: PyTorch's own DistributedDataParallel (Gloo, on
127.0.0.1) training the bag-of-GloVe classifier of bench/trec_bag_pytorch.py on TREC, with
N processes, as `oomlab-cli run --nproc N` does: each process takes every N-th batch of the
same shuffled order (full batches only), gradients averaged by DDP's bucketed all-reduce.

Prints one JSON line: the training samples of all processes (bench/ddp_compare.sh divides
them by the whole process's wall time), accuracy on the test file after the last epoch.
"""
import argparse
import json
import os
import random
import socket
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from trec_bag_pytorch import Bag, batches, load_data  # noqa: E402


def worker(rank, args, port, results):
    torch.set_num_threads(args.threads)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=args.nproc)
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    weights, train_ids, test_ids = load_data(args.train, args.test, args.glove)
    model = DistributedDataParallel(Bag(weights, 128, 6))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    samples = 0
    for _ in range(args.epochs):
        model.train()
        all_batches = [b for b in batches(train_ids, args.batch, True, rng)
                       if len(b[2]) == args.batch]
        mine = all_batches[rank::args.nproc][:len(all_batches) // args.nproc]
        for ids, mask, labels in mine:
            loss = F.cross_entropy(model(ids, mask), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            samples += len(labels)
    model.eval()
    correct = 0
    with torch.no_grad():
        for ids, mask, labels in batches(test_ids, args.batch, False, rng):
            correct += (model(ids, mask).argmax(1) == labels).sum().item()
    results[rank] = (samples, correct / len(test_ids))
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--train", required=True)
    parser.add_argument("--test", required=True)
    parser.add_argument("--glove", required=True)
    parser.add_argument("--nproc", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    results = mp.Manager().dict()
    mp.spawn(worker, args=(args, port, results), nprocs=args.nproc, join=True)
    print(json.dumps({"ranks": args.nproc,
                      "samples": sum(samples for samples, _ in results.values()),
                      "accuracy": results[0][1], "torch": torch.__version__,
                      "threads": args.threads}))


if __name__ == "__main__":
    main()
