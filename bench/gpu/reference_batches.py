"""How batches reach the device, as in engine/train/batching.cpp and streaming_batches.cpp:
eager keeps every example (padded to max_len) resident on the device; streaming builds
batches on the host in a background thread, two ahead, and copies each one over (without
blocking from pinned buffers)."""
import queue
import threading

import torch

BATCHES_AHEAD = 2


class Examples:
    """Encoded examples as host tensors: ids padded to max_len, lengths and labels."""

    def __init__(self, ids, labels, max_len):
        self.lengths = torch.tensor([len(row) for row in ids], dtype=torch.long)
        self.padded = torch.zeros(len(ids), max_len, dtype=torch.long)
        for i, row in enumerate(ids):
            self.padded[i, :len(row)] = torch.tensor(row, dtype=torch.long)
        self.labels = torch.tensor(labels, dtype=torch.long)

    def __len__(self):
        return len(self.labels)

    def padded_length(self, members, padding):
        if padding == "fixed":
            return self.padded.shape[1]
        return max(1, int(self.lengths[members].max()))

    def host_batch(self, members, padding, pinned):
        index = torch.tensor(members, dtype=torch.long)
        length = self.padded_length(index, padding)
        ids = self.padded.index_select(0, index)[:, :length].contiguous()
        mask = torch.arange(length).unsqueeze(0) < self.lengths[index].unsqueeze(1)
        labels = self.labels[index]
        if pinned:
            ids, mask, labels = ids.pin_memory(), mask.pin_memory(), labels.pin_memory()
        return ids, mask, labels


class StreamingBatches:
    """Iterates (ids, mask, labels) on `device`; a producer thread builds host batches."""

    def __init__(self, examples, plan, padding, device, pinned):
        self.device = device
        self.pinned = pinned
        self.ready = queue.Queue(maxsize=BATCHES_AHEAD)
        self.stopping = False
        self.producer = threading.Thread(target=self._produce, args=(examples, plan, padding),
                                         daemon=True)
        self.producer.start()

    def _produce(self, examples, plan, padding):
        try:
            for members in plan:
                batch = examples.host_batch(members, padding, self.pinned)
                while not self.stopping:
                    try:
                        self.ready.put(batch, timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if self.stopping:
                    return
            self.ready.put(None)
        except BaseException as error:  # handed to the consumer
            self.ready.put(error)

    def next(self):
        batch = self.ready.get()
        if batch is None:
            self.ready.put(None)  # stay at the end
            return None
        if isinstance(batch, BaseException):
            raise batch
        if self.device.type == "cpu":
            return batch
        return tuple(t.to(self.device, non_blocking=self.pinned) for t in batch)

    def close(self):
        self.stopping = True
        while self.producer.is_alive():
            try:
                self.ready.get(timeout=0.1)
            except queue.Empty:
                pass


class ResidentBatches:
    """Batches sliced out of the dataset resident on the device (data.loading=eager)."""

    def __init__(self, resident, examples, plan, padding):
        self.resident = resident
        self.examples = examples
        self.plan = iter(plan)
        self.padding = padding

    def next(self):
        members = next(self.plan, None)
        if members is None:
            return None
        ids_all, labels_all, _ = self.resident
        length = self.examples.padded_length(torch.tensor(members), self.padding)
        index = torch.tensor(members, dtype=torch.long).to(ids_all.device)
        ids = ids_all.index_select(0, index).narrow(1, 0, length)
        return ids, ids.ne(0), labels_all.index_select(0, index)

    def close(self):
        pass


def make_resident(examples, device):
    """What eager loading keeps on the device for the whole run (ids, lengths, labels)."""
    lengths = examples.lengths.to(device)
    return examples.padded.to(device), examples.labels.to(device), lengths
