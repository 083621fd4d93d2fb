"""Real CUDA memory snapshots of the programs people write with the libraries they use, for the
snapshot readers' corpus: `transformers`, `timm` and `torchvision` models built from their
configs (random weights), `torch.compile`, a `torch.cuda.MemPool`, a captured CUDA graph,
`record_function` annotations, `_set_memory_metadata`, a `max_entries` ring buffer that
overflows, a history turned on late and an out-of-memory error with Python stacks. Each is
recorded by PyTorch itself (`torch.cuda.memory._dump_snapshot`), in a process of its own.

    bench/gpu/record_corpus.py OUT_DIR [--only NAME]... [--jobs N] [--deadline SECONDS]

Writes OUT_DIR/NAME.pickle and OUT_DIR/NAME.json: the allocator's own figures over the
recorded stretch (the peak statistics are reset where the history starts, so
`max_memory_reserved` is what a replay of the trace should reach), at the dump, and what the
scenario exercises. Needs a CUDA GPU; without one it says so and writes nothing.
"""
import os
import sys
import time

import snapshot_scenarios

MIB = 1 << 20


class History:
    """The memory history, started where a scenario says, with the peaks reset there."""

    def __init__(self, torch):
        self.torch = torch
        self.options = {}

    def start(self, max_entries=200000, context="all", stacks="python", **extra):
        torch = self.torch
        torch.cuda.synchronize()
        self.options = dict(max_entries=max_entries, context=context, stacks=stacks, **extra)
        self.at_start = {"reserved": torch.cuda.memory_reserved(),
                         "allocated": torch.cuda.memory_allocated()}
        torch.cuda.memory._record_memory_history("all", **self.options)
        torch.cuda.reset_peak_memory_stats()


def encoder(torch, dim=256, layers=4):
    layer = torch.nn.TransformerEncoderLayer(dim, 8, 4 * dim, batch_first=True)
    return torch.nn.Sequential(torch.nn.Embedding(16000, dim),
                               torch.nn.TransformerEncoder(layer, layers,
                                                           enable_nested_tensor=False))


def text_steps(torch, model, steps, annotate=None, batch=32, seed=7):
    """Adam steps over token batches whose length changes each step; `annotate(name)` returns a
    context manager put around each phase."""
    generator = torch.Generator().manual_seed(seed)
    head = torch.nn.Linear(256, 6).cuda()
    optimizer = torch.optim.Adam(list(model.parameters()) + list(head.parameters()))
    phase = annotate or (lambda name: contextlib_null())
    for _ in range(steps):
        length = int(torch.randint(32, 257, (1,), generator=generator))
        tokens = torch.randint(16000, (batch, length), generator=generator).cuda()
        labels = torch.randint(6, (batch,), generator=generator).cuda()
        with phase("forward"):
            loss = torch.nn.functional.cross_entropy(head(model(tokens).mean(1)), labels)
        with phase("backward"):
            loss.backward()
        with phase("optimizer"):
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)


def contextlib_null():
    import contextlib
    return contextlib.nullcontext()


def hf_bert(torch, history):
    from transformers import BertConfig, BertForSequenceClassification
    history.start()
    config = BertConfig(vocab_size=8000, hidden_size=256, num_hidden_layers=4,
                        num_attention_heads=4, intermediate_size=1024, num_labels=4)
    model = BertForSequenceClassification(config).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    generator = torch.Generator().manual_seed(3)
    for _ in range(3):
        length = int(torch.randint(64, 321, (1,), generator=generator))
        ids = torch.randint(8000, (16, length), generator=generator)
        kept = torch.randint(length // 2, length + 1, (16, 1), generator=generator)
        mask = (torch.arange(length).unsqueeze(0) < kept).long()
        labels = torch.randint(4, (16,), generator=generator)
        loss = model(input_ids=ids.cuda(), attention_mask=mask.cuda(), labels=labels.cuda()).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)


def timm_vit(torch, history):
    import timm
    history.start()
    model = timm.create_model("vit_tiny_patch16_224", pretrained=False, num_classes=10).cuda()
    optimizer = torch.optim.AdamW(model.parameters())
    for _ in range(3):
        images, labels = torch.randn(32, 3, 224, 224).cuda(), torch.randint(10, (32,)).cuda()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(model(images), labels)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)


def torchvision_resnet(torch, history):
    import torchvision
    history.start()
    model = torchvision.models.resnet18(weights=None, num_classes=10).cuda()
    model = model.to(memory_format=torch.channels_last)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scaler = torch.amp.GradScaler("cuda")
    for _ in range(3):
        images = torch.randn(32, 3, 224, 224).cuda().to(memory_format=torch.channels_last)
        labels = torch.randint(10, (32,)).cuda()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = torch.nn.functional.cross_entropy(model(images), labels)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)


def compiled(torch, history):
    history.start(compile_context=True)
    model = torch.nn.Sequential(torch.nn.Linear(512, 2048), torch.nn.GELU(),
                                torch.nn.Linear(2048, 512), torch.nn.LayerNorm(512),
                                torch.nn.Linear(512, 10)).cuda()
    step_model = torch.compile(model)
    optimizer = torch.optim.Adam(model.parameters())
    for _ in range(3):
        loss = torch.nn.functional.cross_entropy(step_model(torch.randn(256, 512).cuda()),
                                                 torch.randint(10, (256,)).cuda())
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)


def mem_pool(torch, history):
    history.start()
    model = encoder(torch)
    model.cuda()
    pool = torch.cuda.MemPool()
    with torch.cuda.use_mem_pool(pool):  # buffers a program keeps apart, as a KV cache is
        kept = [torch.empty(3 * MIB, dtype=torch.uint8, device="cuda") for _ in range(8)]
    text_steps(torch, model, 2)
    with torch.cuda.use_mem_pool(pool):
        kept.append(torch.empty(40 * MIB, dtype=torch.uint8, device="cuda"))
    del kept[::2]
    text_steps(torch, model, 1, seed=8)


def cuda_graph(torch, history):
    """The whole step captured, as PyTorch's documentation shows, then replayed."""
    history.start()
    model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(),
                                torch.nn.Linear(4096, 10)).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    static_x, static_y = torch.randn(128, 1024, device="cuda"), torch.randint(10, (128,), device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            optimizer.zero_grad(set_to_none=True)
            torch.nn.functional.cross_entropy(model(static_x), static_y).backward()
            optimizer.step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    optimizer.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):
        static_loss = torch.nn.functional.cross_entropy(model(static_x), static_y)
        static_loss.backward()
        optimizer.step()
    for _ in range(5):
        static_x.copy_(torch.randn(128, 1024, device="cuda"))
        graph.replay()


def annotated(torch, history):
    history.start()
    text_steps(torch, encoder(torch).cuda(), 3,
               annotate=lambda name: torch.profiler.record_function(f"## {name} ##"))


def metadata(torch, history):
    import contextlib

    @contextlib.contextmanager
    def tagged(name):
        torch.cuda.memory._set_memory_metadata(name)
        try:
            yield
        finally:
            torch.cuda.memory._set_memory_metadata("")
    history.start()
    text_steps(torch, encoder(torch).cuda(), 3, annotate=tagged)


def ring_buffer(torch, history):
    history.start(max_entries=2500)  # far fewer than the run's events: the oldest are lost
    text_steps(torch, encoder(torch).cuda(), 6)


def late_history(torch, history):
    model = encoder(torch).cuda()
    text_steps(torch, model, 3)  # model, optimizer state and cache in place before the history
    history.start()
    text_steps(torch, model, 2, seed=9)


def out_of_memory(torch, history):
    torch.cuda.set_per_process_memory_fraction(
        (2 << 30) / torch.cuda.get_device_properties(0).total_memory)
    history.start()
    model = encoder(torch, dim=256, layers=6).cuda()
    for step in range(12):
        text_steps(torch, model, 1, batch=64 * (step + 1), seed=step)


# name: (PYTORCH_CUDA_ALLOC_CONF, what runs, ends out of memory)
SCENARIOS = {
    "compile": ("", compiled, False),
    "hf-bert": ("", hf_bert, False),
    "hf-bert-expandable": ("expandable_segments:True", hf_bert, False),
    "timm-vit-bf16": ("", timm_vit, False),
    "torchvision-resnet-fp16": ("", torchvision_resnet, False),
    "mem-pool": ("", mem_pool, False),
    "cuda-graph": ("", cuda_graph, False),
    "record-function": ("", annotated, False),
    "memory-metadata": ("", metadata, False),
    "ring-buffer": ("", ring_buffer, False),
    "late-history": ("", late_history, False),
    "oom-stacks": ("", out_of_memory, True),
}


def record(name, out_dir):
    """One scenario, in this process (its allocator settings are already in the environment)."""
    import torch
    conf, scenario, ends_out_of_memory = SCENARIOS[name]
    pickle_path = os.path.join(out_dir, f"{name}.pickle")
    history = History(torch)
    summary = {"scenario": name, "what": scenario.__doc__ or scenario.__name__, "alloc_conf": conf,
               "torch": torch.__version__, "cuda": torch.version.cuda,
               "device": torch.cuda.get_device_name(0)}
    if ends_out_of_memory:
        torch._C._cuda_attach_out_of_memory_observer(
            lambda *_: torch.cuda.memory._dump_snapshot(pickle_path))
    started = time.monotonic()
    try:
        scenario(torch, history)
    except torch.OutOfMemoryError as error:
        summary["oom_message"] = str(error)
    torch.cuda.synchronize()
    summary["seconds"] = round(time.monotonic() - started, 2)
    summary["history"] = history.options
    summary["at_history_start"] = history.at_start
    # What the recorded stretch reached, and the state at the dump.
    summary["max_memory_reserved"] = torch.cuda.max_memory_reserved()
    summary["max_memory_allocated"] = torch.cuda.max_memory_allocated()
    if not ends_out_of_memory:
        summary["memory_reserved"] = torch.cuda.memory_reserved()
        summary["memory_allocated"] = torch.cuda.memory_allocated()
        torch.cuda.memory._dump_snapshot(pickle_path)
    snapshot_scenarios.write_summary(torch, summary, out_dir, name)


if __name__ == "__main__":
    sys.exit(snapshot_scenarios.main(__file__, __doc__.split("\n\n")[0],
                                     {name: conf for name, (conf, _, _) in SCENARIOS.items()},
                                     record, jobs=4, timeout=120))
