#!/usr/bin/env python3
"""A plain PyTorch script that trains what `oomlab-cli run` trains for one config, so that peak
device memory and throughput can be compared side by side on the same GPU.

The config is the engine's own: `oomlab-cli config show` resolves --config/--set, so both
read the same values. Data, vocabulary, models, batching, the loss (cross entropy divided by
train.accumulation), the optimizer step with gradients then set to None, and the validation
schedule follow the engine (see the modules beside this file).

    reference_train.py --cli build/app/oomlab-cli --set model.kind=transformer ... [--device cpu]
    reference_train.py --resolved config.json          (the output of `oomlab-cli config show`)

Prints one JSON line. On CUDA: peak_allocated_bytes = torch.cuda.max_memory_allocated() minus
what was allocated before the model existed, over training and evaluation. samples_per_s:
training samples of every step after the first over their time (evaluations excluded,
clocks read after a device synchronisation).
"""
import argparse
import contextlib
import json
import os
import subprocess
import sys
import time

import torch
import torch.nn.functional as F

sys.dont_write_bytecode = True  # no __pycache__ beside the scripts
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference_batches import Examples, ResidentBatches, StreamingBatches, make_resident  # noqa: E402
from reference_data import plan_batches, prepare  # noqa: E402
from reference_models import make_classifier  # noqa: E402

RECENT_LOSSES = 20  # final_train_loss: the mean of the last 20 steps, as the engine reports it
AUTOCAST = {"bf16": torch.bfloat16, "fp16": torch.float16}


def make_optimizer(train, parameters):
    """LibTorch's optimizers loop over parameters one by one: foreach=False does the same."""
    kind, lr = train["optimizer"], train["lr"]
    optim = torch.optim
    if kind == "sgd":
        return optim.SGD(parameters, lr=lr, foreach=False)
    if kind == "momentum":
        return optim.SGD(parameters, lr=lr, momentum=0.9, foreach=False)
    if kind == "adam":
        return optim.Adam(parameters, lr=lr, foreach=False)
    if kind == "adamw":
        return optim.AdamW(parameters, lr=lr, weight_decay=0.01, foreach=False)
    return optim.Adagrad(parameters, lr=lr, foreach=False)


class PartTimes:
    """Wall time by part of a step, as the engine's seconds_by_part counts it (on the CPU only:
    on CUDA the parts would need a synchronisation each, which would change what is timed)."""

    def __init__(self, enabled):
        self.enabled = enabled
        self.seconds = {}
        self.part, self.since = None, time.perf_counter()

    def switch_to(self, part):
        if not self.enabled:
            return
        now = time.perf_counter()
        if self.part is not None:
            self.seconds[self.part] = self.seconds.get(self.part, 0.0) + now - self.since
        self.part, self.since = part, now


def grad_scaler():
    if hasattr(torch.amp, "GradScaler"):
        return torch.amp.GradScaler("cuda")
    return torch.cuda.amp.GradScaler()


class ReferenceRun:
    def __init__(self, config, device):
        self.config = config
        self.train = config["train"]
        self.device = device
        self.cuda = device.type == "cuda"
        self.data = prepare(config)
        max_len = self.train["max_len"]
        self.train_examples = Examples(*self.data["train"], max_len)
        self.valid_examples = Examples(*self.data["valid"], max_len)
        precision = config["memory"]["precision"]
        self.autocast_dtype = AUTOCAST.get(precision)
        self.scaler = grad_scaler() if precision == "fp16" else None
        self.pinned = config["data"]["pin_memory"] and self.cuda
        self.steps = 0
        self.losses = []        # per step, on the device until the end
        self.step_samples = []
        self.evaluations = []   # (step, start, end) of each evaluation
        self.timer_start = None  # the end of the first step
        self.leaked = None
        self.val_accuracy = self.val_loss = None
        self.parts = PartTimes(enabled=not self.cuda)

    def sync(self):
        if self.cuda:
            torch.cuda.synchronize(self.device)

    def autocast(self):
        if self.autocast_dtype is None:
            return contextlib.nullcontext()
        return torch.autocast(device_type=self.device.type, dtype=self.autocast_dtype)

    def execute(self):
        if self.cuda:
            self.sync()
            self.baseline = torch.cuda.memory_allocated(self.device)
            torch.cuda.reset_peak_memory_stats(self.device)
        self.parts.switch_to("setup")
        torch.manual_seed(self.train["seed"])
        self.model = make_classifier(self.config, self.data["table"], self.data["classes"])
        self.model.to(self.device)
        trainable = [p for p in self.model.parameters() if p.requires_grad]
        self.optimizer = make_optimizer(self.train, trainable)
        self.resident = None
        if self.config["data"]["loading"] == "eager":
            self.resident = make_resident(self.train_examples, self.device)
        start = time.perf_counter()
        self.train_epochs()
        self.sync()
        self.parts.switch_to(None)
        self.train_end = time.perf_counter()
        self.wall_seconds = self.train_end - start

    def batches(self, examples, plan, resident=None):
        padding = self.train["padding"]
        if resident is not None:
            return ResidentBatches(resident, examples, plan, padding)
        return StreamingBatches(examples, plan, padding, self.device, self.pinned)

    def train_epochs(self):
        every, max_steps = self.config["eval"]["every"], self.train["max_steps"]
        epoch = 1
        while epoch <= self.train["epochs"] or max_steps > 0:
            plan = plan_batches(self.train_examples.lengths.tolist(), self.train["batch_size"],
                                self.train["padding"], self.train["seed"], epoch)
            source = self.batches(self.train_examples, plan, self.resident)
            try:
                while self.optimizer_step(source):
                    if max_steps > 0 and self.steps >= max_steps:
                        self.evaluate()
                        return
                    if every > 0 and self.steps % every == 0:
                        self.evaluate()
            finally:
                source.close()
            if every == 0 or self.steps % every != 0:
                self.evaluate()
            if max_steps == 0 and epoch == self.train["epochs"]:
                return
            epoch += 1

    def optimizer_step(self, source):
        accumulation = self.train["accumulation"]
        keep_graph = self.config["debug"]["keep_loss_graph"]
        self.model.train()
        step_loss, samples, micro_batches = None, 0, 0
        while micro_batches < accumulation:
            self.parts.switch_to("data")
            batch = source.next()
            if batch is None:
                break
            ids, mask, labels = batch
            self.parts.switch_to("forward")
            with self.autocast():
                loss = F.cross_entropy(self.model(ids, mask), labels) / accumulation
            scaled = self.scaler.scale(loss) if self.scaler else loss
            self.parts.switch_to("backward")
            scaled.backward(retain_graph=keep_graph)
            step_loss = loss.detach() if step_loss is None else step_loss + loss.detach()
            if keep_graph:  # the classic leak, on purpose
                self.leaked = loss if self.leaked is None else self.leaked + loss
            samples += labels.shape[0]
            micro_batches += 1
        if micro_batches == 0:
            return False
        self.parts.switch_to("update")
        if self.scaler:
            self.scaler.step(self.optimizer)
            self.scaler.update()
        else:
            self.optimizer.step()
        for parameter in self.model.parameters():
            parameter.grad = None
        if self.config["memory"]["empty_cache"] == "step" and self.cuda:
            torch.cuda.empty_cache()
        self.steps += 1
        self.losses.append(step_loss * (accumulation / micro_batches))
        self.step_samples.append(samples)
        if self.steps == 1:
            self.sync()
            self.timer_start = time.perf_counter()
        return True

    def evaluate(self):
        """Validation, timed apart: its time is not training time."""
        self.sync()
        self.parts.switch_to("evaluation")
        start = time.perf_counter()
        self.validate()
        self.sync()
        self.evaluations.append((self.steps, start, time.perf_counter()))

    def training_seconds(self):
        """From the end of the first step to the end of the last, evaluations left out."""
        last = self.steps
        end = next((start for step, start, _ in self.evaluations if step == last),
                   self.train_end)
        between = sum(stop - start for step, start, stop in self.evaluations if step < last)
        return end - self.timer_start - between

    def validate(self):
        examples = self.valid_examples
        if len(examples) == 0:
            return
        no_grad = self.config["eval"]["no_grad"]
        self.model.eval()
        plan = plan_batches(examples.lengths.tolist(), self.train["batch_size"],
                            self.train["padding"], self.train["seed"], 0)
        source = self.batches(examples, plan)
        loss_sum, correct, kept_graphs = 0.0, 0, []
        with torch.no_grad() if no_grad else contextlib.nullcontext():
            while (batch := source.next()) is not None:
                ids, mask, labels = batch
                with self.autocast():
                    logits = self.model(ids, mask)
                    loss = F.cross_entropy(logits, labels, reduction="sum")
                if not no_grad:
                    kept_graphs.append(loss)  # the mistake eval.no_grad=false shows
                loss_sum += float(loss.detach().double().cpu())
                correct += int(logits.argmax(1).eq(labels).sum().cpu())
        source.close()
        del kept_graphs
        if self.config["memory"]["empty_cache"] == "eval" and self.cuda:
            torch.cuda.empty_cache()
        self.val_loss = loss_sum / len(examples)
        self.val_accuracy = correct / len(examples)

    def summary(self):
        losses = torch.stack(self.losses).double().cpu().tolist() if self.losses else []
        recent = losses[-RECENT_LOSSES:]
        timed = sum(self.step_samples[1:])
        seconds = self.training_seconds() if timed else 0.0
        result = {
            "status": "completed", "device": str(self.device), "torch": torch.__version__,
            "cuda": torch.version.cuda, "steps": self.steps,
            "train_examples": len(self.train_examples), "valid_examples": len(self.valid_examples),
            "vocab_rows": self.data["table"].shape[0], "embeddings": self.data["embeddings"],
            "parameters": sum(p.numel() for p in self.model.parameters()),
            "final_train_loss": sum(recent) / len(recent) if recent else None,
            "val_accuracy": self.val_accuracy, "val_loss": self.val_loss,
            "samples_per_s": timed / seconds if seconds > 0 else None,
            "timed_samples": timed, "timed_seconds": seconds, "wall_seconds": self.wall_seconds,
            "peak_allocated_bytes": None, "peak_reserved_bytes": None, "baseline_bytes": None,
            "seconds_by_part": self.parts.seconds if self.parts.enabled else None,
        }
        if self.cuda:
            result.update({
                "device_name": torch.cuda.get_device_name(self.device),
                "baseline_bytes": self.baseline,
                "peak_allocated_bytes": torch.cuda.max_memory_allocated(self.device)
                - self.baseline,
                "peak_reserved_bytes": torch.cuda.max_memory_reserved(self.device),
            })
        return result


def resolve_config(args):
    """The engine's effective config, from `oomlab-cli config show` or a file it wrote."""
    if args.resolved:
        with open(args.resolved) as stream:
            return json.load(stream)
    command = [args.cli, "config", "show"]
    if args.config:
        command += ["--config", args.config]
    for setting in args.set:
        command += ["--set", setting]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(result.stderr.strip() or f"{' '.join(command)} failed")
    return json.loads(result.stdout)


def resolve_device(name):
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    device = torch.device(name)
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", 0)
    return device


def check_supported(config, device):
    if device.type == "cpu" and config["memory"]["precision"] == "fp16":
        raise SystemExit("memory.precision=fp16 needs a CUDA device (as in the engine)")
    if config["memory"]["cap_mb"]:
        print("memory.cap_mb is ignored: the reference measures the unconstrained peak",
              file=sys.stderr)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cli", default=os.environ.get("OOMLAB_CLI", "oomlab-cli"),
                        help="oomlab-cli, to resolve the config (default: $OOMLAB_CLI)")
    parser.add_argument("--config", help="an experiment config file, as for oomlab-cli")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--resolved", help="a config printed by `oomlab-cli config show`")
    parser.add_argument("--device", help="overrides the config's device (cpu, cuda, cuda:N)")
    parser.add_argument("--native-lstm", action="store_true",
                        help="on the CPU, the native LSTM kernel the engine runs, not oneDNN's")
    args = parser.parse_args()

    config = resolve_config(args)
    device = resolve_device(args.device or config["device"])
    check_supported(config, device)
    if args.native_lstm:
        torch.backends.mkldnn.enabled = False  # oneDNN's LSTM off: ATen's own, as the engine's
    run = ReferenceRun(config, device)
    try:
        run.execute()
        result = run.summary()
    except RuntimeError as error:  # torch.cuda.OutOfMemoryError is one
        if "out of memory" not in str(error):
            raise
        result = {"status": "oom", "error": str(error).splitlines()[0], "steps": run.steps}
    print(json.dumps(result))
    return 3 if result["status"] == "oom" else 0


if __name__ == "__main__":
    sys.exit(main())
