"""The GPU benchmark's Markdown report: one row per config, the pass marks, the commands."""
import statistics

MIB = 1 << 20
MEMORY_TOLERANCE = 0.05      # engine peak within 5% of the script's
SPEED_FLOOR = 1.0            # engine samples/s at least the script's ...
SPEED_FLOOR_BAG = 1.3        # ... and 1.3x for the bag model, where framework overhead dominates
ESTIMATE_TOLERANCE = 10.0    # median |estimate - measured| / measured, in %
PEAK_TOLERANCE = 5.0         # each config's estimate of the peak, in %
RESERVED_TOLERANCE = 10.0    # each config's predicted most reserved, in %


def _number(value, digits=1):
    return "n/a" if value is None else f"{value:,.{digits}f}"


def _mark(passed):
    return "n/a" if passed is None else ("pass" if passed else "**FAIL**")


def _ran(part):
    return part.get("status") in ("completed", "oom")


def assess(result):
    """The figures and pass marks of one config (None where they cannot be had)."""
    engine, reference = result.get("engine", {}), result.get("reference", {})
    estimate = result.get("estimate", {})
    row = {"engine_peak": engine.get("peak_bytes") if _ran(engine) else None,
           "script_peak": reference.get("peak_allocated_bytes") if _ran(reference) else None,
           "engine_speed": engine.get("samples_per_s"),
           "script_speed": reference.get("samples_per_s"),
           "estimate": estimate.get("peak_bytes")}
    row["peak_ratio"] = row["memory_ok"] = None
    if row["engine_peak"] and row["script_peak"]:
        row["peak_ratio"] = row["engine_peak"] / row["script_peak"]
        row["memory_ok"] = abs(row["peak_ratio"] - 1) <= MEMORY_TOLERANCE
    floor = SPEED_FLOOR_BAG if result["settings"].get("model.kind", "bag") == "bag" else SPEED_FLOOR
    row["floor"] = floor
    row["speed_ratio"] = row["speed_ok"] = None
    if row["engine_speed"] and row["script_speed"]:
        row["speed_ratio"] = row["engine_speed"] / row["script_speed"]
        row["speed_ok"] = row["speed_ratio"] >= floor
    row["estimate_error"] = _error(row["estimate"], row["engine_peak"])
    # What the allocator reserved at most, and the device's memory outside it at the peak.
    row["reserved"] = engine.get("most_reserved_bytes") if _ran(engine) else None
    row["reserved_estimate"] = estimate.get("reserved_peak_bytes")
    row["reserved_error"] = _error(row["reserved_estimate"], row["reserved"])
    row["outside"] = engine.get("breakdown", {}).get("other") if _ran(engine) else None
    row["outside_estimate"] = estimate.get("breakdown", {}).get("other")
    row["outside_error"] = _error(row["outside_estimate"], row["outside"])
    return row


def _error(predicted, measured):
    """(predicted - measured) / measured in %, or None without both."""
    return None if not predicted or not measured else (predicted - measured) / measured * 100


def _percent(error):
    return "n/a" if error is None else f"{error:+.1f}%"


def _mib(value):
    return "n/a" if value is None else f"{value / MIB:,.1f}"


def _status(result):
    if "skipped" in result:
        return f"skipped: {result['skipped']}"
    parts = [result.get("engine", {}), result.get("reference", {})]
    return " / ".join(part.get("status", "n/a") for part in parts)


def _header(env):
    cpu = env["mode"] == "cpu"
    lines = [
        f"# {'CPU dry run of the GPU benchmark' if cpu else 'GPU benchmark'}: "
        f"engine against plain PyTorch, {env['date']}",
        "",
        f"- Device: {env['device_name']}; nvidia-smi: {env['gpu']}",
        f"- Engine: {env['engine']}, LibTorch {env['libtorch']} (built for CUDA "
        f"{env['engine_cuda']}; sees a GPU: {env['engine_sees_gpu']})",
        f"- Reference script: PyTorch {env['pytorch']}, CUDA {env['cuda']}",
        f"- Every config: {env['data']}, {env['steps']} optimizer steps, then a validation pass; "
        "no memory cap"
        + (f"; OMP_NUM_THREADS={env['threads']} for both." if env.get("threads") else "."),
        "",
        "Peak: bytes allocated by tensors at the highest point of training and evaluation, over "
        "what was allocated before the model existed (engine: `peak_bytes` of the run; script: "
        "`torch.cuda.max_memory_allocated()` minus that baseline). Throughput: training samples "
        "of every step after the first over their time, evaluations left out (engine: from the "
        "run's stored per-step metrics). Estimate: `oomlab-cli estimate` against the engine's "
        "measured peak.",
        "",
        f"Pass marks: peaks within {MEMORY_TOLERANCE:.0%}; engine throughput at least "
        f"{SPEED_FLOOR:.1f}x the script's ({SPEED_FLOOR_BAG:.1f}x for the bag model); median "
        f"estimator error at most {ESTIMATE_TOLERANCE:.0f}%.",
    ]
    if cpu:
        lines += ["", "CPU dry run: the script measures no memory on the CPU, so its peak and "
                  "the ratio read n/a; the engine's CPU peak comes from its tracking allocator."]
    return lines


def write_report(path, env, results, commands):
    rows = [(result, assess(result)) for result in results]
    lines = _header(env) + [
        "", "## Memory, throughput and the estimator", "",
        "| config | status | engine peak MiB | script peak MiB | ratio | peak | "
        "engine samples/s | script samples/s | ratio | speed | estimate MiB | estimate error |",
        "|---|---|---:|---:|---:|---|---:|---:|---:|---|---:|---:|",
    ]
    for result, row in rows:
        lines.append(
            f"| {result['label']} | {_status(result)} | {_mib(row['engine_peak'])} | "
            f"{_mib(row['script_peak'])} | {_number(row['peak_ratio'], 3)} | "
            f"{_mark(row['memory_ok'])} | {_number(row['engine_speed'], 0)} | "
            f"{_number(row['script_speed'], 0)} | {_number(row['speed_ratio'], 2)} | "
            f"{_mark(row['speed_ok'])} (≥{row['floor']:.1f}) | {_mib(row['estimate'])} | "
            f"{_number(row['estimate_error'])}{'%' if row['estimate_error'] is not None else ''} |")

    lines += [
        "", "## Reserved and outside the allocator", "",
        "Most reserved: the most the caching allocator held at any sampled step (the engine's "
        "stored metrics) against `estimate`'s `reserved_peak_bytes`. Outside the allocator: "
        "NVML's used memory minus reserved at the peak (the run's breakdown, `other`) against "
        "`estimate`'s prediction from what an H200 held.",
        "",
        "| config | most reserved MiB | predicted MiB | error | outside MiB | predicted MiB | "
        "error |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for result, row in rows:
        lines.append(
            f"| {result['label']} | {_mib(row['reserved'])} | {_mib(row['reserved_estimate'])} | "
            f"{_percent(row['reserved_error'])} | {_mib(row['outside'])} | "
            f"{_mib(row['outside_estimate'])} | {_percent(row['outside_error'])} |")

    def within(key, tolerance):
        errors = [abs(row[key]) for _, row in rows if row[key] is not None]
        return f"{sum(e <= tolerance for e in errors)} of {len(errors)} configs"

    errors = [abs(row["estimate_error"]) for _, row in rows if row["estimate_error"] is not None]
    median = statistics.median(errors) if errors else None
    memory = [row["memory_ok"] for _, row in rows if row["memory_ok"] is not None]
    speed = [row["speed_ok"] for _, row in rows if row["speed_ok"] is not None]
    lines += [
        "", "## Summary", "",
        f"- Peaks within {MEMORY_TOLERANCE:.0%}: {sum(memory)} of {len(memory)} configs"
        + ("" if memory else " (no memory figures from the script)"),
        f"- Throughput at its floor: {sum(speed)} of {len(speed)} configs",
        f"- Median estimator error: {_number(median)}% over {len(errors)} configs: "
        f"{_mark(None if median is None else median <= ESTIMATE_TOLERANCE)}"
        + (" (against the engine's CPU measurement)" if env["mode"] == "cpu" else ""),
        f"- Estimates of the peak within {PEAK_TOLERANCE:.0f}%: {within('estimate_error', PEAK_TOLERANCE)}",
        f"- Predicted most reserved within {RESERVED_TOLERANCE:.0f}%: "
        f"{within('reserved_error', RESERVED_TOLERANCE)}",
        f"- Predicted memory outside the allocator within {RESERVED_TOLERANCE:.0f}%: "
        f"{within('outside_error', RESERVED_TOLERANCE)}",
        "", "## Training results (the two should learn alike)", "",
        "| config | steps engine / script | final train loss engine / script | "
        "validation accuracy engine / script |",
        "|---|---:|---:|---:|",
    ]
    for result, _ in rows:
        engine, reference = result.get("engine", {}), result.get("reference", {})
        accuracies = [part.get("val_accuracy") for part in (engine, reference)]
        lines.append(
            f"| {result['label']} | {engine.get('steps', 'n/a')} / {reference.get('steps', 'n/a')} | "
            f"{_number(engine.get('final_train_loss'), 4)} / "
            f"{_number(reference.get('final_train_loss'), 4)} | "
            + " / ".join("n/a" if a is None else f"{a:.1%}" for a in accuracies) + " |")
    failures = [(r["label"], part, r[part].get("error")) for r in results
                for part in ("engine", "reference", "estimate")
                if r.get(part, {}).get("error")]
    if failures:
        lines += ["", "## Errors", ""]
        lines += [f"- {label} ({part}): {message}" for label, part, message in failures]
    lines += ["", "## Commands", "", "```sh"] + commands + ["```", ""]
    with open(path, "w") as stream:
        stream.write("\n".join(lines))
