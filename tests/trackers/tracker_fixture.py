"""What the tracker tests share: the real oomlab-cli, a database with two real runs (one
completed with validation, one out of memory after a step), the runs as `runs export --json`
reads them from the database, and the series an export must hold."""

import json
import os
import shutil
import socket
import subprocess
import tempfile
import unittest

CLI = os.environ["OOMLAB_CLI"]
COMMAND_TIMEOUT_S = 120
# How often the tests' runs that train until seen on the server send their steps
# (`--mlflow-every`): a send round more each half second, not each 2 s, the default. Those
# runs train at the slow pace (`--pace slow`, 120 ms idle after each step): what they check
# is what the server shows while a run trains, not how fast it trains, and the CPU they
# would burn while the test waits is the neighbouring tests'.
SEND_EVERY_S = 0.5

# The per-step series, by the name trackers show and the metric row's field: from the end of
# each optimizer step ("step" rows) and from validation ("eval" rows).
STEP_SERIES = {
    "train/loss": ("loss", 1),
    "memory/allocated_MiB": ("allocated_bytes", 1 << 20),
    "memory/reserved_MiB": ("reserved_bytes", 1 << 20),
    "memory/peak_MiB": ("peak_bytes", 1 << 20),
    "memory/device_used_MiB": ("device_used_bytes", 1 << 20),
    "speed/samples_per_s": ("samples_per_s", 1),
}
EVAL_SERIES = {"eval/loss": ("loss", 1), "eval/accuracy": ("accuracy", 1)}


def cli(*arguments, check=True, env=None):
    """Runs oomlab-cli (with `env` added to the environment); returns (exit code, stdout,
    stderr)."""
    ran = subprocess.run([CLI, *arguments], capture_output=True, text=True,
                         timeout=COMMAND_TIMEOUT_S, check=False,
                         env={**os.environ, **(env or {})})
    if check and ran.returncode != 0:
        raise AssertionError(f"oomlab-cli {' '.join(arguments)} exited {ran.returncode}:\n"
                             f"{ran.stdout}\n{ran.stderr}")
    return ran.returncode, ran.stdout, ran.stderr


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def expected_series(export):
    """{name: [(step, value)]} of a run's export (`runs export ID --json`), rank 0."""
    series = {}
    for row in export["metrics"]:
        if row["rank"] != 0:
            continue
        table = STEP_SERIES if row["phase"] == "step" else (
            EVAL_SERIES if row["phase"] == "eval" else {})
        for name, (field, scale) in table.items():
            if row[field] is not None:
                series.setdefault(name, []).append((row["step"], row[field] / scale))
    return series


def flattened_config(config, prefix=""):
    flat = {}
    for key, value in config.items():
        name = prefix + key
        if isinstance(value, dict):
            flat.update(flattened_config(value, name + "."))
        else:
            flat[name] = value
    return flat


class RunsFixture(unittest.TestCase):
    """A temporary folder with the two runs, made once for the test class."""

    @classmethod
    def setUpClass(cls):
        cls.folder = tempfile.mkdtemp(prefix="oomlab-trackers-")
        cls.db = os.path.join(cls.folder, "runs.sqlite")
        cli("run", "--db", cls.db, "--name", "completed", "--set", "train.max_steps=12",
            "--set", "eval.every=4")
        code, _, _ = cli("run", "--db", cls.db, "--name", "out of memory", "--set",
                         "model.kind=bilstm", "--set", "train.max_steps=30", "--set",
                         "memory.cap_mb=50", check=False)
        assert code == 3, f"the capped run should have run out of memory (exit 3), not {code}"
        cls.completed, cls.oom = 1, 2
        cls.exports = {run: json.loads(cli("runs", "export", str(run), "--db", cls.db,
                                           "--json")[1])
                       for run in (cls.completed, cls.oom)}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.folder, ignore_errors=True)
