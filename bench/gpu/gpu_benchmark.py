#!/usr/bin/env python3
"""The engine against plain PyTorch on one GPU: for each config (benchmark_configs.py) run
`oomlab-cli run`, the reference script reference_train.py with the same settings, and
`oomlab-cli estimate`; write a Markdown report with peak memory, throughput and estimator
error side by side.

    bench/gpu/gpu_benchmark.py [--cli build-gpu/app/oomlab-cli] [--python python3]
                               [--device cuda|cpu] [--steps N] [--only TEXT] [--out FILE]
                               [--budget SECONDS]

`--device cpu` is a dry run of the whole harness without a GPU: the script has no memory
figures there, so its memory columns read n/a. Needs only the standard library; the
reference script needs `--python` with torch. `--budget` bounds the whole run: a command still
running when it is spent is stopped, the configs not started are reported as skipped, and the
report is written either way.
"""
import argparse
import datetime
import json
import os
import shlex
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.dont_write_bytecode = True  # no __pycache__ beside the scripts
sys.path.insert(0, HERE)
from benchmark_configs import all_configs, common_settings, set_arguments  # noqa: E402
from benchmark_report import write_report  # noqa: E402


class Runner:
    """Runs commands, keeps each one for the report, and parses their last JSON line."""

    def __init__(self, log, deadline=None):
        self.commands = []
        self.log = log
        self.deadline = deadline  # time.monotonic() past which no command runs on

    def seconds_left(self):
        return None if self.deadline is None else self.deadline - time.monotonic()

    def json_line(self, command, ok_codes=(0,)):
        """The command's last JSON line (or its whole output, when that is one document)."""
        left = self.seconds_left()
        stopped = {"status": "stopped", "error": "the time budget (--budget) was spent"}
        if left is not None and left <= 0:
            return stopped
        self.commands.append(shlex.join(command))
        result = self.run(command, left)
        if result is None:
            self.log("    stopped: the time budget (--budget) was spent")
            return stopped
        lines = [line for line in result.stdout.splitlines() if line.startswith("{")]
        if result.returncode not in ok_codes or not lines:
            message = (result.stderr.strip().splitlines() or ["no output"])[-1]
            self.log(f"    failed ({result.returncode}): {message}")
            return {"status": "error", "error": message, "exit_code": result.returncode}
        try:
            return json.loads(result.stdout)
        except json.JSONDecodeError:
            return json.loads(lines[-1])

    @staticmethod
    def run(command, timeout):
        """The finished command, or None when it ran past `timeout` seconds: then it is stopped
        with every process it started (the ranks of a data-parallel run)."""
        with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              start_new_session=True) as process:
            try:
                stdout, stderr = process.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.communicate()
                return None
            except KeyboardInterrupt:  # in a session of its own, the command missed Ctrl-C
                os.killpg(process.pid, signal.SIGKILL)
                raise
        return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)

    def text(self, command):
        try:
            return subprocess.run(command, capture_output=True, text=True, check=True,
                                  timeout=60).stdout.strip()
        except (OSError, subprocess.CalledProcessError, subprocess.TimeoutExpired):
            return ""


def engine_throughput(metrics):
    """Samples per second over every step after the first, from the run's stored metrics,
    counted as the reference script counts: evaluations between steps left out.

    A step row's samples_per_s covers the time since the previous step row, so times that
    interval gives the step's samples."""
    steps = {row["step"]: row for row in metrics if row["phase"] == "step"}
    evals = {row["step"]: row for row in metrics if row["phase"] == "eval"}
    samples, milliseconds = 0, 0.0
    for step in sorted(steps):
        if step < 2 or step - 1 not in steps or steps[step]["samples_per_s"] is None:
            continue
        previous = steps[step - 1]["wall_ms"]
        since_previous = steps[step]["wall_ms"] - previous
        samples += round(steps[step]["samples_per_s"] * since_previous / 1000.0)
        started = max(previous, evals[step - 1]["wall_ms"] if step - 1 in evals else previous)
        milliseconds += steps[step]["wall_ms"] - started
    return samples * 1000.0 / milliseconds if milliseconds > 0 else None


def most_reserved(metrics):
    """The most the caching allocator reserved at any sample of the run (None: not recorded)."""
    reserved = [row["reserved_bytes"] for row in metrics if row.get("reserved_bytes") is not None]
    return max(reserved) if reserved else None


def run_config(runner, args, label, settings, db):
    sets = set_arguments(settings)
    result = {"label": label, "settings": settings}
    if args.device == "cpu" and settings.get("memory.precision") == "fp16":
        result["skipped"] = "fp16 autocast needs CUDA"
        return result
    engine = runner.json_line([args.cli, "run", "--db", db, "--json", "--name", label] + sets,
                              ok_codes=(0, 3))
    if "run_id" in engine:
        export = runner.json_line([args.cli, "runs", "export", str(engine["run_id"]), "--db", db,
                                   "--format", "json"])
        engine["samples_per_s"] = engine_throughput(export.get("metrics", []))
        engine["most_reserved_bytes"] = most_reserved(export.get("metrics", []))
    result["engine"] = engine
    result["reference"] = runner.json_line(
        [args.python, os.path.join(HERE, "reference_train.py"), "--cli", args.cli] + sets,
        ok_codes=(0, 3))
    result["estimate"] = runner.json_line([args.cli, "estimate", "--json"] + sets)
    return result


def environment(runner, args, results):
    smi = runner.text(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                       "--format=csv,noheader"]).splitlines()
    device = runner.json_line([args.cli, "device", "--json"])
    reference = next((r["reference"] for r in results
                      if r.get("reference", {}).get("status") == "completed"), {})
    return {
        "date": datetime.date.today().isoformat(),
        "mode": args.device,
        "gpu": smi[0] if smi else "n/a (nvidia-smi not found)",
        "engine": runner.text([args.cli, "--version"]),
        "libtorch": device.get("torch_version", "n/a"),
        "engine_cuda": device.get("torch_cuda_version") or "none",
        "engine_sees_gpu": device.get("cuda"),
        "pytorch": reference.get("torch", "n/a"),
        "cuda": reference.get("cuda") or "n/a",
        "device_name": reference.get("device_name", reference.get("device", "n/a")),
        "steps": args.steps,
        "threads": args.threads,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default_cli = next((p for p in (os.path.join(ROOT, d, "app", "oomlab-cli")
                                    for d in ("build-gpu", "build")) if os.path.exists(p)), None)
    parser.add_argument("--cli", default=default_cli, help="oomlab-cli (default: build-gpu/, build/)")
    parser.add_argument("--python", default=sys.executable, help="a Python with torch")
    parser.add_argument("--device", default="cuda", help="cuda, cuda:N or cpu (a dry run)")
    parser.add_argument("--steps", type=int, help="optimizer steps per run (cuda 150, cpu 30)")
    parser.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "data"),
                        help="folder with trec.train.txt, trec.test.txt and the GloVe excerpt "
                        "(without them: a seeded stand-in dataset and synthetic vectors)")
    parser.add_argument("--only", action="append", default=[],
                        help="run only configs whose label contains this text (repeatable)")
    parser.add_argument("--list", action="store_true", help="print the configs and stop")
    parser.add_argument("--out", help="the report (default: bench/results/<gpu|cpu>-DATE.md)")
    parser.add_argument("--threads", type=int,
                        help="CPU threads for both (OMP_NUM_THREADS); default: each one's own")
    parser.add_argument("--db", help="the engine's run database (default: the report's name "
                        "with .sqlite, so the runs can be opened in the workbench)")
    parser.add_argument("--raw", help="also write every result as JSON to this file")
    parser.add_argument("--budget", type=float,
                        help="seconds for the whole run; configs not started by then are "
                        "skipped, a command still running is stopped (default: no limit)")
    args = parser.parse_args()
    started = time.monotonic()
    args.steps = args.steps or (30 if args.device == "cpu" else 150)
    if args.threads:
        os.environ["OMP_NUM_THREADS"] = os.environ["MKL_NUM_THREADS"] = str(args.threads)

    common, data = common_settings(os.path.abspath(args.data), args.steps, args.device)
    configs = all_configs(os.path.join(ROOT, "resources", "lessons"), common)
    if args.only:
        configs = [c for c in configs if any(text in c[0] for text in args.only)]
    if args.list:
        for label, settings in configs:
            print(f"{label}: {shlex.join(set_arguments(settings))}")
        return 0
    if not args.cli or not os.path.exists(args.cli):
        raise SystemExit("oomlab-cli not found: build it or pass --cli")

    def log(message):
        print(message, file=sys.stderr, flush=True)

    mode = "cpu" if args.device == "cpu" else "gpu"
    today = datetime.date.today().isoformat()
    out = args.out or os.path.join(ROOT, "bench", "results", f"{mode}-{today}.md")
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    db = args.db or os.path.splitext(out)[0] + ".sqlite"
    # The few seconds after the last config are for the environment's commands and the report.
    runner = Runner(log, started + args.budget - 15 if args.budget else None)
    results = []
    for number, (label, settings) in enumerate(configs, 1):
        left = runner.seconds_left()
        if left is not None and left <= 0:
            results.append({"label": label, "settings": settings,
                            "skipped": "the time budget (--budget) was spent"})
            continue
        log(f"[{number}/{len(configs)}] {label}")
        results.append(run_config(runner, args, label, settings, db))
    runner.deadline = None  # the environment's few quick commands run whatever is left
    env = environment(runner, args, results)
    env["data"] = data
    write_report(out, env, results, runner.commands)
    if args.raw:
        with open(args.raw, "w") as stream:
            json.dump({"environment": env, "results": results}, stream, indent=1)
    print(out)
    # Out-of-memory is a result; a run that failed or gave no answer is not. One the budget
    # stopped or left out failed nothing: the report lists it.
    failed = [r["label"] for r in results if "skipped" not in r and any(
        r[part].get("status") not in ("completed", "oom", "stopped")
        for part in ("engine", "reference"))]
    if failed:
        log("no result for: " + ", ".join(failed))
    out_of_time = [r["label"] for r in results if "budget" in r.get("skipped", "") or any(
        r.get(part, {}).get("status") == "stopped" for part in ("engine", "reference"))]
    if out_of_time:
        log(f"stopped or left out when the time budget was spent: {len(out_of_time)} of "
            f"{len(results)} configs, from {out_of_time[0]}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
