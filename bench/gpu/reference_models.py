"""The engine's three classifiers (engine/model) in plain PyTorch, module for module and in the
same construction order, so that parameter shapes, saved activations and initialisation match.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

STORAGE = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


class EmbeddingTable(nn.Module):
    """Pre-trained rows, optionally frozen, sparse, 16-bit or kept on the host (then only the
    looked-up rows travel to the compute device). Returns float32 vectors."""

    def __init__(self, initial, embeddings):
        super().__init__()
        self.weight = nn.Parameter(initial.to(STORAGE[embeddings["dtype"]], copy=True),
                                   requires_grad=embeddings["trainable"])
        self.sparse = embeddings["sparse_grad"]
        self.on_host = embeddings["placement"] == "cpu"

    def _apply(self, fn, *args, **kwargs):
        if not self.on_host:
            return super()._apply(fn, *args, **kwargs)
        return self  # model.to(device) leaves a host-placed table where it is

    def dim(self):
        return self.weight.shape[1]

    def forward(self, ids):
        if self.on_host and ids.device != self.weight.device:
            rows = F.embedding(ids.to(self.weight.device), self.weight, padding_idx=0,
                               sparse=self.sparse)
            return rows.to(ids.device, torch.float32, non_blocking=True)
        return F.embedding(ids, self.weight, padding_idx=0, sparse=self.sparse).float()


def masked_mean(values, mask):
    weights = mask.unsqueeze(-1).to(values.dtype)
    return (values * weights).sum(1) / weights.sum(1).clamp_min(1.0)


class Bag(nn.Module):
    def __init__(self, initial, config, classes):
        super().__init__()
        model = config["model"]
        self.embeddings = EmbeddingTable(initial, config["embeddings"])
        self.hidden = nn.Linear(self.embeddings.dim(), model["hidden"])
        self.dropout = nn.Dropout(model["dropout"])
        self.output = nn.Linear(model["hidden"], classes)

    def forward(self, ids, mask):
        pooled = masked_mean(self.embeddings(ids), mask)
        return self.output(self.dropout(torch.relu(self.hidden(pooled))))


class BiLstm(nn.Module):
    """One bidirectional LSTM per layer with dropout between, as the engine stacks them (so
    that each layer's memory can be told apart): cuDNN then runs each layer on its own, with a
    workspace and reserve per layer, where num_layers would run them in one call."""

    def __init__(self, initial, config, classes):
        super().__init__()
        model = config["model"]
        self.embeddings = EmbeddingTable(initial, config["embeddings"])
        width = [self.embeddings.dim()] + [2 * model["hidden"]] * (model["layers"] - 1)
        self.layers = nn.ModuleList(
            nn.LSTM(width[layer], model["hidden"], bidirectional=True, batch_first=True)
            for layer in range(model["layers"]))
        self.dropout = nn.Dropout(model["dropout"])
        self.output = nn.Linear(2 * model["hidden"], classes)

    def forward(self, ids, mask):
        states = self.embeddings(ids)
        for number, layer in enumerate(self.layers):
            states, _ = layer(states)
            if number + 1 < len(self.layers):
                states = self.dropout(states)
        return self.output(self.dropout(masked_mean(states, mask)))


class EncoderBlock(nn.Module):
    """Pre-norm self-attention + feed-forward, written out as in engine/model/encoder_block.cpp."""

    def __init__(self, d_model, heads, ffn, dropout):
        super().__init__()
        self.heads = heads
        self.attention_norm = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.attention_output = nn.Linear(d_model, d_model)
        self.ffn_norm = nn.LayerNorm(d_model)
        self.ffn_in = nn.Linear(d_model, ffn)
        self.ffn_out = nn.Linear(ffn, d_model)
        self.dropout = nn.Dropout(dropout)

    def attention(self, x, mask):
        batch, length, width = x.shape
        head_dim = width // self.heads
        qkv = self.qkv(x).view(batch, length, 3, self.heads, head_dim).permute(2, 0, 3, 1, 4)
        scores = torch.matmul(qkv[0], qkv[1].transpose(-2, -1)) / math.sqrt(head_dim)
        padding = mask.logical_not().view(batch, 1, 1, length)
        weights = self.dropout(torch.softmax(scores.masked_fill(padding, -1e4), -1))
        context = torch.matmul(weights, qkv[2]).transpose(1, 2).reshape(batch, length, width)
        return self.attention_output(context)

    def forward(self, x, mask):
        attended = x + self.dropout(self.attention(self.attention_norm(x), mask))
        hidden = F.gelu(self.ffn_in(self.ffn_norm(attended)))
        return attended + self.dropout(self.ffn_out(hidden))


class Transformer(nn.Module):
    def __init__(self, initial, config, classes):
        super().__init__()
        model = config["model"]
        d_model = model["d_model"]
        self.embeddings = EmbeddingTable(initial, config["embeddings"])
        self.projection = nn.Linear(self.embeddings.dim(), d_model)
        self.positions = nn.Embedding(config["train"]["max_len"], d_model)
        self.dropout = nn.Dropout(model["dropout"])
        self.blocks = nn.ModuleList(
            EncoderBlock(d_model, model["heads"], model["ffn"], model["dropout"])
            for _ in range(model["layers"]))
        self.final_norm = nn.LayerNorm(d_model)
        self.output = nn.Linear(d_model, classes)
        self.checkpointing = config["memory"]["checkpointing"] == "layers"

    def forward(self, ids, mask):
        positions = torch.arange(ids.shape[1], device=ids.device).unsqueeze(0)
        x = self.dropout(self.projection(self.embeddings(ids)) + self.positions(positions))
        for block in self.blocks:
            if self.checkpointing and torch.is_grad_enabled():
                # Keeps only the block's input; backward reruns it with the same dropout masks.
                x = checkpoint(block, x, mask, use_reentrant=False)
            else:
                x = block(x, mask)
        return self.output(masked_mean(self.final_norm(x), mask))


def make_classifier(config, initial, classes):
    kinds = {"bag": Bag, "bilstm": BiLstm, "transformer": Transformer}
    return kinds[config["model"]["kind"]](initial, config, classes)
