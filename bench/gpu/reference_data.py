"""Data for the reference script, prepared as the engine prepares it: the dataset read and
split (engine/data), its labels mapped, the embedding table's rows (train/text_encoding.cpp)
and the examples encoded and cut to train.max_len.

Files are read as latin-1 (one character per byte) so that words compare byte for byte with
the GloVe file's, as in the engine. Random numbers (shuffles, rows without a pre-trained
vector) follow the same rules with Python's generators, not the engine's bit for bit.
"""
import json
import os
import random

import torch

from reference_tokenizer import tokenize

# name: (words, dim, cased), as in engine/glove/variants.cpp
VARIANTS = {
    "6B.50d": (400000, 50, False), "6B.100d": (400000, 100, False),
    "6B.200d": (400000, 200, False), "6B.300d": (400000, 300, False),
    "42B.300d": (1917494, 300, False), "840B.300d": (2196017, 300, True),
    "twitter.27B.25d": (1193514, 25, False), "twitter.27B.50d": (1193514, 50, False),
    "twitter.27B.100d": (1193514, 100, False), "twitter.27B.200d": (1193514, 200, False),
}
PAD, UNKNOWN = 0, 1
RANDOM_ROW_SCALE = 0.01  # rows without a pre-trained vector start near zero
SYNTHETIC_SCALE = 0.4    # about the spread of real GloVe values
SPACES = " \t\r\n\f\v"   # the engine's whitespace; str.strip() would also take U+0085, U+00A0


def _lines(path):
    with open(path, encoding="latin-1") as stream:
        content = stream.read()
    if content.startswith("\xef\xbb\xbf"):
        content = content[3:]
    return [line.rstrip("\r") for line in content.split("\n") if line.strip(SPACES)]


def _read_examples(path, fmt):
    """(text, label) pairs of a file in one of the line formats the benchmark uses."""
    if fmt == "auto":
        fmt = "jsonl" if path.endswith((".jsonl", ".json")) else "label-space-text"
    examples = []
    for line in _lines(path):
        if fmt == "label-space-text":
            line = line.strip(SPACES)
            end = next((i for i, c in enumerate(line) if c in SPACES), len(line))
            label, text = line[:end], line[end:]
        elif fmt == "label-tab-text":
            label, _, text = line.partition("\t")
        elif fmt == "text-tab-label":
            text, _, label = line.rpartition("\t")
        elif fmt == "fasttext":
            fields = line.split()
            label = fields[0][len("__label__"):]
            text = " ".join(f for f in fields if not f.startswith("__label__"))
        elif fmt == "jsonl":
            record = json.loads(line.encode("latin-1").decode("utf-8"))
            text = record["text"].encode("utf-8").decode("latin-1")
            label = str(record["label"])
        else:
            raise SystemExit(f"dataset.format={fmt}: the reference script reads label-space-text, "
                             "label-tab-text, text-tab-label, fasttext and jsonl files")
        examples.append((text.strip(SPACES), label.strip(SPACES)))
    return examples


def _label_names(examples):
    names = sorted({label for _, label in examples})
    try:
        return sorted(names, key=int)  # "10" after "9", as the engine orders integer labels
    except ValueError:
        return names


def _splitmix_split(count, ratio, seed):
    """engine/data/seeded_split.cpp: a SplitMix64 Fisher-Yates shuffle, bit for bit."""
    mask = (1 << 64) - 1
    state = seed & mask

    def below(bound):
        nonlocal state
        threshold = ((1 << 64) - bound) % bound
        while True:
            state = (state + 0x9E3779B97F4A7C15) & mask
            z = state
            z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
            z ^= z >> 31
            if z >= threshold:
                return z % bound

    order = list(range(count))
    for i in range(count, 1, -1):
        j = below(i)
        order[i - 1], order[j] = order[j], order[i - 1]
    n_valid = 0
    if ratio > 0 and count >= 2:
        n_valid = min(max(int(count * ratio + 0.5), 1), count - 1)
    return sorted(order[n_valid:]), sorted(order[:n_valid])


def load_dataset(config):
    """Training and validation examples as (text, label id), and the number of classes."""
    dataset = config["dataset"]
    if not dataset["path"]:
        raise SystemExit("dataset.path is empty: the reference script needs a dataset file "
                         "(the engine's embedded default is not read here)")
    train = _read_examples(dataset["path"], dataset["format"])
    names = _label_names(train)
    ids = {name: i for i, name in enumerate(names)}
    if dataset["valid_path"]:
        valid = _read_examples(dataset["valid_path"], dataset["format"])
    else:
        kept, held = _splitmix_split(len(train), dataset["valid_ratio"], config["train"]["seed"])
        train, valid = [train[i] for i in kept], [train[i] for i in held]
    def mapped(examples):
        return [(text, ids[label]) for text, label in examples]
    return mapped(train), mapped(valid), len(names)


def _read_glove(path):
    """Words (file order, duplicates kept) and their vectors; word2vec headers skipped."""
    words, vectors, dim = [], [], None
    for number, line in enumerate(_lines(path)):
        fields = line.rstrip(" ").split(" ")
        if number == 0 and len(fields) == 2 and all(f.isdigit() for f in fields):
            dim = int(fields[1])
            continue
        dim = dim or len(fields) - 1
        words.append(" ".join(fields[:-dim]))  # a word may contain spaces (840B)
        vectors.append([float(v) for v in fields[-dim:]])
    return words, torch.tensor(vectors, dtype=torch.float32).reshape(-1, dim)


def _vector_file(embeddings):
    if embeddings["source"] == "file":
        return embeddings["path"]
    if embeddings["source"] == "default":
        folders = [os.environ.get("OOMLAB_GLOVE_DIR", "")]
        data_home = os.environ.get("XDG_DATA_HOME") or os.path.expanduser("~/.local/share")
        folders.append(os.path.join(data_home, "oomlab", "glove"))
        for folder in filter(None, folders):
            path = os.path.join(folder, f"glove.{embeddings['variant']}.txt")
            if os.path.exists(path):
                return path
    return ""


def _vectors(embeddings, dataset_words, generator):
    """(words, vectors, description) for embeddings.source; synthetic tables lead with the
    dataset's words so the data finds them, like the engine's."""
    vocab = embeddings["vocab"]
    top_n = int(vocab.split(":")[1]) if vocab.startswith("top:") else 0
    path = _vector_file(embeddings)
    if path:
        words, vectors = _read_glove(path)
        if top_n:
            words, vectors = words[:top_n], vectors[:top_n]
        return words, vectors, f"GloVe file {path}"
    rows_of_variant, dim, _ = VARIANTS[embeddings["variant"]]
    rows = {"full": rows_of_variant, "dataset": len(dataset_words)}.get(
        vocab, min(top_n, rows_of_variant))
    words = dataset_words[:rows] + [f"<synthetic_{i}>" for i in range(len(dataset_words), rows)]
    vectors = torch.randn(rows, dim, generator=generator) * SYNTHETIC_SCALE
    return words, vectors, f"synthetic {embeddings['variant']} ({rows} x {dim})"


def embedding_rows(config, train_tokens):
    """The table's initial rows (row 0 padding, row 1 unknown) and a token -> row function."""
    embeddings = config["embeddings"]
    generator = torch.Generator().manual_seed(config["train"]["seed"])
    dataset_words = list(dict.fromkeys(t for tokens in train_tokens for t in tokens))
    words, vectors, description = _vectors(embeddings, dataset_words, generator)
    first_row = {}
    for row, word in enumerate(words):
        first_row.setdefault(word, row)
    dim = vectors.shape[1]

    if embeddings["vocab"] == "dataset":
        table = torch.randn(len(dataset_words) + 2, dim, generator=generator) * RANDOM_ROW_SCALE
        table[PAD] = 0
        found = [(i + 2, first_row[w]) for i, w in enumerate(dataset_words) if w in first_row]
        if found:
            rows, sources = zip(*found)
            table[list(rows)] = vectors[list(sources)]
        index = {w: i + 2 for i, w in enumerate(dataset_words)}
        return table, lambda word: index.get(word, UNKNOWN), description

    # full or top:N: the file's first rows in file order, after <pad> and <unk>
    table = torch.empty(len(words) + 2, dim)
    table[PAD] = 0
    table[UNKNOWN] = torch.randn(dim, generator=generator) * RANDOM_ROW_SCALE
    table[2:] = vectors
    return table, lambda word: first_row[word] + 2 if word in first_row else UNKNOWN, description


def prepare(config):
    """Everything a run needs before the model: encoded examples, the table, class count."""
    train, valid, classes = load_dataset(config)
    cased = VARIANTS.get(config["embeddings"]["variant"], (0, 0, False))[2]
    train_tokens = [tokenize(text, cased) for text, _ in train]
    valid_tokens = [tokenize(text, cased) for text, _ in valid]
    table, row_of, description = embedding_rows(config, train_tokens)
    max_len = config["train"]["max_len"]

    def encode(tokens_list, examples):
        # Cut to max_len; an empty text still gets one position to pool over.
        ids = [[row_of(t) for t in tokens[:max_len]] or [UNKNOWN] for tokens in tokens_list]
        return ids, [label for _, label in examples]

    return {"train": encode(train_tokens, train), "valid": encode(valid_tokens, valid),
            "classes": classes, "table": table, "embeddings": description}


def plan_batches(lengths, batch_size, padding, seed, epoch):
    """Example indices per batch for one epoch (engine/train/batching.cpp): a seeded shuffle;
    bucketing sorts windows of 50 batches by length, then shuffles the batches."""
    order = list(range(len(lengths)))
    rng = random.Random(seed * 1000003 + epoch)
    rng.shuffle(order)
    if padding == "bucket":
        window = 50 * batch_size
        for start in range(0, len(order), window):
            order[start:start + window] = sorted(order[start:start + window],
                                                 key=lambda i: lengths[i])
    batches = [order[s:s + batch_size] for s in range(0, len(order), batch_size)]
    if padding == "bucket":
        rng.shuffle(batches)
    return batches
