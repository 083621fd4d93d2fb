#!/usr/bin/env python3
"""The reference for bench/trec_compare.sh: a plain PyTorch script that trains the same
mean-pooled GloVe bag-of-words classifier as `oomlab-cli run --set model.kind=bag` on TREC.

Same data, vocabulary rule (training words; pre-trained vector where GloVe has one, random
N(0, 0.01) otherwise), model (embedding -> masked mean -> Linear(D,128) -> ReLU -> Dropout(0.1)
-> Linear(128, classes)), Adam 1e-3, batch 32, padding to the longest example of a batch.
Prints one JSON line: accuracy on the test file and seconds per epoch (training + evaluation).
"""
import argparse
import json
import random
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def read_trec(path):
    examples = []
    with open(path, encoding="latin-1") as lines:
        for line in lines:
            label, _, text = line.rstrip("\n").partition(" ")
            if text:
                examples.append((text.lower().split(), int(label)))
    return examples


def read_glove(path):
    vectors = {}
    with open(path, encoding="utf-8", errors="replace") as lines:
        for line in lines:
            fields = line.rstrip("\n").split(" ")
            vectors.setdefault(fields[0], [float(v) for v in fields[1:]])
    return vectors


class Bag(nn.Module):
    def __init__(self, weights, hidden, classes):
        super().__init__()
        self.embedding = nn.Embedding.from_pretrained(weights, freeze=False, padding_idx=0)
        self.hidden = nn.Linear(weights.shape[1], hidden)
        self.dropout = nn.Dropout(0.1)
        self.output = nn.Linear(hidden, classes)

    def forward(self, ids, mask):
        vectors = self.embedding(ids) * mask.unsqueeze(-1)
        pooled = vectors.sum(1) / mask.sum(1, keepdim=True).clamp_min(1.0)
        return self.output(self.dropout(torch.relu(self.hidden(pooled))))


def batches(encoded, size, shuffle, rng):
    order = list(range(len(encoded)))
    if shuffle:
        rng.shuffle(order)
    for start in range(0, len(order), size):
        chosen = [encoded[i] for i in order[start:start + size]]
        length = max(len(ids) for ids, _ in chosen)
        ids = torch.zeros(len(chosen), length, dtype=torch.long)
        for row, (tokens, _) in enumerate(chosen):
            ids[row, :len(tokens)] = torch.tensor(tokens)
        yield ids, (ids != 0).float(), torch.tensor([label for _, label in chosen])


def load_data(train_path, test_path, glove_path):
    """The table's initial weights and the encoded training and test examples."""
    train, test = read_trec(train_path), read_trec(test_path)
    glove = read_glove(glove_path)
    dim = len(next(iter(glove.values())))
    words = {"<pad>": 0, "<unk>": 1}
    for tokens, _ in train:
        for token in tokens:
            words.setdefault(token, len(words))
    weights = torch.randn(len(words), dim) * 0.01
    weights[0] = 0
    for word, row in words.items():
        if word in glove:
            weights[row] = torch.tensor(glove[word])

    def encode(data):
        return [([words.get(t, 1) for t in tokens] or [1], label) for tokens, label in data]

    return weights, encode(train), encode(test)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--train", required=True)
    parser.add_argument("--test", required=True)
    parser.add_argument("--glove", required=True)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    weights, train_ids, test_ids = load_data(args.train, args.test, args.glove)
    model = Bag(weights, 128, 6)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    epoch_seconds = []
    accuracy = 0.0
    for _ in range(args.epochs):
        start = time.perf_counter()
        model.train()
        for ids, mask, labels in batches(train_ids, 32, True, rng):
            loss = F.cross_entropy(model(ids, mask), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        model.eval()
        correct = 0
        with torch.no_grad():
            for ids, mask, labels in batches(test_ids, 32, False, rng):
                correct += (model(ids, mask).argmax(1) == labels).sum().item()
        accuracy = correct / len(test_ids)
        epoch_seconds.append(time.perf_counter() - start)
    print(json.dumps({"accuracy": accuracy, "epoch_seconds": sum(epoch_seconds) / len(epoch_seconds),
                      "torch": torch.__version__, "threads": torch.get_num_threads()}))


if __name__ == "__main__":
    main()
