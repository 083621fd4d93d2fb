"""The GPU estimate of a CPU run against the GPU itself: the small training scripts of different
shapes in estimate_shapes.py (HELD_OUT there: those the estimate was not worked out on), each
recorded with `oomlab-cli record` on a machine without CUDA (the profiler's memory events) and
read by `oomlab-cli snapshot show --json` for its "gpu_estimate"; then, on a GPU, the same
scripts recorded there, with the caching allocator's own most allocated and most reserved
(torch.cuda.max_memory_allocated / max_memory_reserved).

    cpu_estimate.py cpu CLI OUT_DIR                    the CPU's records and estimates, into
                                                       OUT_DIR/cpu-estimate.json
    cpu_estimate.py gpu CLI OUT_DIR --carried FILE     the same scripts on the GPU against FILE
                                                       (the CPU's cpu-estimate.json), into
                                                       OUT_DIR/gpu-estimate.json
    cpu_estimate.py gpu CLI OUT_DIR --carried FILE --variant NAME[+NAME] [--only SHAPE]...
                                                       the same with some of the GPU's ways
                                                       turned off (VARIANTS), into
                                                       OUT_DIR/gpu-estimate-NAME.json
    cpu_estimate.py compare CPU_ESTIMATE GPU_ESTIMATE  the CPU's estimates (made again, by a
                                                       newer build) against a GPU's figures
    cpu_estimate.py run SHAPE --device DEV [--stats FILE] [--snapshot FILE]
                                                       one script (what `record` runs)

The error is reported as the xMem estimator reports its own: the median relative error
|estimate - measured| / measured over the scripts, and how often the estimate was under. The
`hf-bert` shape needs the `transformers` package (the GPU image has it).
"""
import argparse
import contextlib
import json
import pathlib
import statistics
import subprocess
import sys

import torch
import torch.nn as nn

from estimate_shapes import SHAPES, STEPS

MIB = 2**20




def train(shape, device, steps, foreach=None):
    """Adam steps of SHAPE on DEVICE, the batches made on the host with one seed, as a loader's
    are, and copied to the device."""
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(1)
    model = SHAPES[shape]().to(device)
    optimizer = (torch.optim.AdamW(model.parameters(), weight_decay=0.01, foreach=foreach)
                 if shape == "decoder" else torch.optim.Adam(model.parameters(), foreach=foreach))
    for step in range(steps):
        inputs = [tensor.to(device) for tensor in SHAPES[shape].batch(step, generator)]
        labels = torch.randint(0, 10, (inputs[0].shape[0],), generator=generator).to(device)
        loss = nn.functional.cross_entropy(model(*inputs), labels)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()


# What a GPU does otherwise than a CPU, each turned off in a variant of the GPU's run, so that
# an estimate's error can be put down to it: fused attention kernels (the CPU's attention with
# dropout is the math one, which keeps each head's weights), cuDNN (its workspaces), and Adam's
# multi-tensor (foreach) update, which PyTorch uses on CUDA alone.
VARIANTS = {"math-attention": "--math-attention", "no-cudnn": "--no-cudnn",
            "single-tensor-adam": "--single-tensor-adam"}


def variant_of(text):
    unknown = [part for part in text.split("+") if part not in VARIANTS]
    if unknown:
        raise argparse.ArgumentTypeError(f"no variant {', '.join(unknown)}: {', '.join(VARIANTS)}")
    return text


def run_one(args):
    if args.device == "cpu":
        torch.set_num_threads(2)
    if args.no_cudnn:
        torch.backends.cudnn.enabled = False
    context = contextlib.nullcontext()
    if args.math_attention:
        from torch.nn.attention import SDPBackend, sdpa_kernel
        context = sdpa_kernel(SDPBackend.MATH)
    recording = args.snapshot and args.device.startswith("cuda")
    if recording:
        torch.cuda.memory._record_memory_history(max_entries=1000000, context="all", stacks="all")
    with context:
        train(args.shape, args.device, args.steps, foreach=False if args.single_tensor_adam else None)
    if recording:
        torch.cuda.memory._dump_snapshot(str(args.snapshot))
    if args.stats and args.device.startswith("cuda"):
        torch.cuda.synchronize()
        args.stats.write_text(json.dumps({
            "gpu_peak_allocated": torch.cuda.max_memory_allocated(),
            "gpu_reserved": torch.cuda.max_memory_reserved(),
            "device": torch.cuda.get_device_name(0), "torch": torch.__version__}))
    return 0


def record(cli, out, shape, device, steps, stats=None, variant=None):
    """`oomlab-cli record` of one script; its log beside the record."""
    name = "-".join(filter(None, [device, variant, shape]))
    command = [cli, "record", "--out", str(out / f"{name}.pickle"), "--",
               sys.executable, str(pathlib.Path(__file__).resolve()), "run", shape,
               "--device", device, "--steps", str(steps)]
    if stats:
        command += ["--stats", str(stats)]
    command += [VARIANTS[part] for part in variant.split("+")] if variant else []
    with open(out / f"{name}.log", "w") as log:
        code = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT).returncode
    if code != 0:
        raise RuntimeError(f"{' '.join(command)} exited {code}: see {log.name}")


def shown(cli, path):
    return json.loads(subprocess.run([cli, "snapshot", "show", str(path), "--json"], check=True,
                                     capture_output=True, text=True).stdout)


def cpu_side(args):
    rows = []
    for shape in args.only or SHAPES:
        trace = args.out / f"cpu-{shape}.json"
        if not (args.reuse and trace.exists()):
            record(args.cli, args.out, shape, "cpu", args.steps)
        cpu = next(d for d in shown(args.cli, trace)["devices"] if d["device"] == -1)
        rows.append({"shape": shape, "steps": args.steps,
                     "cpu_peak_allocated": cpu["peak_allocated_bytes"],
                     "estimate_allocated": cpu["gpu_estimate"]["peak_allocated_bytes"],
                     "estimate_reserved": cpu["gpu_estimate"]["peak_reserved_bytes"]})
        print(f"{shape:12} CPU peak {rows[-1]['cpu_peak_allocated'] / MIB:9.1f} MiB  estimate "
              f"{rows[-1]['estimate_allocated'] / MIB:9.1f} MiB allocated, "
              f"{rows[-1]['estimate_reserved'] / MIB:9.1f} MiB reserved", flush=True)
    (args.out / "cpu-estimate.json").write_text(json.dumps(
        {"torch": torch.__version__, "rows": rows}, indent=1))
    return 0


def xmem_summary(errors):
    """xMem's two figures: the median relative error and how often the estimate was under."""
    return {"median_relative_error": statistics.median(abs(e) for e in errors),
            "under": sum(e < 0 for e in errors), "of": len(errors)}


def compared(rows):
    """Each row's errors, printed, and the summary over them."""
    for row in rows:
        row["error_allocated"] = row["estimate_allocated"] / row["gpu_peak_allocated"] - 1
        row["error_reserved"] = row["estimate_reserved"] / row["gpu_reserved"] - 1
        print(f"{row['shape']:12} allocated: estimate {row['estimate_allocated'] / MIB:8.1f} MiB, "
              f"GPU {row['gpu_peak_allocated'] / MIB:8.1f} ({row['error_allocated']:+.1%});  "
              f"reserved: estimate {row['estimate_reserved'] / MIB:8.1f}, "
              f"GPU {row['gpu_reserved'] / MIB:8.1f} ({row['error_reserved']:+.1%})", flush=True)
    summary = {}
    if rows:
        summary = {key: xmem_summary([row[f"error_{key}"] for row in rows])
                   for key in ("allocated", "reserved")}
        for key, figures in summary.items():
            print(f"peak {key}: median relative error {figures['median_relative_error']:.1%}, "
                  f"under in {figures['under']} of {figures['of']}")
    return summary


def gpu_side(args):
    carried = json.loads(args.carried.read_text())
    carried["rows"] = [row for row in carried["rows"] if not args.only or row["shape"] in args.only]
    variant = f"-{args.variant}" if args.variant else ""
    rows = []
    for row in carried["rows"]:
        stats = args.out / f"cuda{variant}-{row['shape']}-stats.json"
        try:
            record(args.cli, args.out, row["shape"], "cuda", row["steps"], stats, args.variant)
        except RuntimeError as error:
            print(error, flush=True)
            continue
        rows.append(dict(row, **json.loads(stats.read_text())))
    summary = compared(rows)
    (args.out / f"gpu-estimate{variant}.json").write_text(json.dumps(
        {"cpu_torch": carried.get("torch"), "gpu_torch": torch.__version__,
         "variant": args.variant, "rows": rows, "summary": summary}, indent=1))
    return 0 if len(rows) == len(carried["rows"]) else 1


def compare_side(args):
    """The CPU's estimates (cpu-estimate.json, made again by a newer build, say) against what a
    GPU measured before (a gpu-estimate.json): no GPU needed."""
    measured = {row["shape"]: row for row in json.loads(args.measured.read_text())["rows"]}
    rows = [dict(row, gpu_peak_allocated=measured[row["shape"]]["gpu_peak_allocated"],
                 gpu_reserved=measured[row["shape"]]["gpu_reserved"])
            for row in json.loads(args.carried.read_text())["rows"] if row["shape"] in measured]
    summary = compared(rows)
    if args.out:
        args.out.write_text(json.dumps({"rows": rows, "summary": summary}, indent=1))
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ("cpu", "gpu"):
        side = commands.add_parser(name)
        side.add_argument("cli")
        side.add_argument("out", type=pathlib.Path)
        side.add_argument("--steps", type=int, default=STEPS)
        side.add_argument("--only", action="append", choices=sorted(SHAPES))
    commands.choices["gpu"].add_argument("--carried", type=pathlib.Path, required=True)
    commands.choices["gpu"].add_argument(
        "--variant", type=variant_of,
        help=f"the GPU's run with its ways turned off: {', '.join(VARIANTS)}, joined by +")
    commands.choices["cpu"].add_argument("--reuse", action="store_true",
                                         help="read the CPU's records already in OUT_DIR")
    compare = commands.add_parser("compare")
    compare.add_argument("carried", type=pathlib.Path, help="a cpu-estimate.json")
    compare.add_argument("measured", type=pathlib.Path, help="a gpu-estimate.json")
    compare.add_argument("--out", type=pathlib.Path)
    one = commands.add_parser("run")
    one.add_argument("shape", choices=sorted(SHAPES))
    one.add_argument("--device", default="cpu")
    one.add_argument("--steps", type=int, default=STEPS)
    one.add_argument("--stats", type=pathlib.Path)
    one.add_argument("--snapshot", type=pathlib.Path,
                     help="on CUDA, the allocator's history (C++ stacks too) dumped into it")
    one.add_argument("--math-attention", action="store_true")
    one.add_argument("--no-cudnn", action="store_true")
    one.add_argument("--single-tensor-adam", action="store_true")
    args = parser.parse_args()
    if args.command == "run":
        return run_one(args)
    if args.command == "compare":
        return compare_side(args)
    args.out.mkdir(parents=True, exist_ok=True)
    return cpu_side(args) if args.command == "cpu" else gpu_side(args)


if __name__ == "__main__":
    sys.exit(main())
