"""The configs the GPU benchmark runs: every run of every lesson (resources/lessons), the three
models in each precision, and a host-placed embedding table. All train on the same data, for
the same number of steps, without a memory cap (the point is the unconstrained footprint)."""
import glob
import json
import os
import random
import tempfile

PRECISIONS = ("fp32", "bf16", "fp16")
MODELS = ("bag", "bilstm", "transformer")


def write_stand_in_dataset(folder, seed=42):
    """A seeded stand-in for TREC where the real files are absent: the same size, classes and
    a similar length distribution, with class-dependent made-up words (so it is learnable).
    Memory and throughput depend on shapes, not on the words."""
    rng = random.Random(seed)
    common = [f"w{i}" for i in range(2000)]
    topics = [[f"c{label}w{i}" for i in range(1000)] for label in range(6)]
    paths = []
    for name, count in (("stand-in.train.txt", 5452), ("stand-in.test.txt", 500)):
        lines = []
        for _ in range(count):
            label = rng.randrange(6)
            length = min(37, max(3, int(rng.gauss(10, 4))))
            words = [rng.choice(topics[label]) if rng.random() < 0.4 else rng.choice(common)
                     for _ in range(length)]
            lines.append(f"{label} {' '.join(words)}")
        paths.append(os.path.join(folder, name))
        with open(paths[-1], "w") as stream:
            stream.write("\n".join(lines) + "\n")
    return paths


def common_settings(data_dir, steps, device):
    """Settings every config shares: TREC (or its stand-in) and, when present, the GloVe
    excerpt beside it. Returns them and a description of the data."""
    train, test = (os.path.join(data_dir, f"trec.{part}.txt") for part in ("train", "test"))
    data = "TREC train/test"
    if not os.path.exists(train):
        folder = os.path.join(tempfile.gettempdir(), "oomlab-stand-in-data")
        os.makedirs(folder, exist_ok=True)
        train, test = write_stand_in_dataset(folder)
        data = f"a seeded stand-in for TREC ({train}; no {data_dir}/trec.train.txt)"
    settings = {
        "dataset.path": train,
        "dataset.valid_path": test,
        "dataset.format": "label-space-text",
        "train.max_steps": str(steps),
        "memory.cap_mb": "0",
        "device": device,
    }
    glove = os.path.join(data_dir, "glove.6B.50d.head2446.txt")
    if os.path.exists(glove):
        settings.update({"embeddings.source": "file", "embeddings.path": glove})
    else:
        settings["embeddings.source"] = "synthetic"
    return settings, data


def _text(value):
    return json.dumps(value) if isinstance(value, bool) else str(value)


def lesson_configs(lessons_dir):
    configs = []
    for path in sorted(glob.glob(os.path.join(lessons_dir, "*.json"))):
        with open(path) as stream:
            lesson = json.load(stream)
        name = os.path.splitext(os.path.basename(path))[0]
        for run in lesson["runs"]:
            settings = {key: _text(value) for key, value in lesson["base"].items()}
            settings.update({key: _text(value) for key, value in run["set"].items()})
            # The benchmark decides length, data and cap for every config alike.
            for key in ("train.max_steps", "dataset.valid_ratio", "memory.cap_mb"):
                settings.pop(key, None)
            configs.append((f"{name}: {run['label']}", settings))
    return configs


def model_configs():
    return [(f"{model} {precision}", {"model.kind": model, "memory.precision": precision})
            for model in MODELS for precision in PRECISIONS]


def extra_configs():
    return [
        ("bag table on host", {"model.kind": "bag", "embeddings.placement": "cpu"}),
        ("transformer 4 layers checkpointed bf16",
         {"model.kind": "transformer", "model.layers": "4", "memory.checkpointing": "layers",
          "memory.precision": "bf16"}),
        ("bilstm 4 x 16 accumulated", {"model.kind": "bilstm", "train.batch_size": "16",
                                       "train.accumulation": "4"}),
    ]


def all_configs(lessons_dir, common):
    """(label, settings) with the common settings applied under each config's own."""
    configs = []
    for label, settings in lesson_configs(lessons_dir) + model_configs() + extra_configs():
        merged = dict(common)
        if settings.get("embeddings.source") == "synthetic":
            merged.pop("embeddings.path", None)
        merged.update(settings)
        configs.append((label, merged))
    return configs


def set_arguments(settings):
    arguments = []
    for key, value in settings.items():
        arguments += ["--set", f"{key}={value}"]
    return arguments
