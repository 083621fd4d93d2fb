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


def copy_test_database(name, path):
    """Copies the database NAME of tests/support/make_test_database.sh (what it holds is said
    there) to PATH, with every file beside it that its runs left (runs.sqlite-wal, -shm,
    -reserve, -writers): from the folder the suite made it in once (OOMLAB_TEST_DATABASES,
    CTest's fixtures), or made here when the test runs on its own."""
    with tempfile.TemporaryDirectory(prefix="oomlab-database-") as made_here:
        folder = os.environ.get("OOMLAB_TEST_DATABASES") or made_here
        if folder == made_here:
            script = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir,
                                  "support", "make_test_database.sh")
            subprocess.run([script, CLI, folder, name], check=True, timeout=COMMAND_TIMEOUT_S)
        made = os.path.join(folder, name)
        for file_name in os.listdir(made):
            if file_name.startswith("runs.sqlite"):
                shutil.copyfile(os.path.join(made, file_name),
                                path + file_name[len("runs.sqlite"):])


class RunsFixture(unittest.TestCase):
    """A temporary folder with the two runs (make_test_database.sh's tracker-runs: 1
    completed with validation, 2 out of memory after a step), copied once for the test class."""

    @classmethod
    def setUpClass(cls):
        cls.folder = tempfile.mkdtemp(prefix="oomlab-trackers-")
        cls.db = os.path.join(cls.folder, "runs.sqlite")
        copy_test_database("tracker-runs", cls.db)
        cls.completed, cls.oom = 1, 2
        cls.exports = {run: json.loads(cli("runs", "export", str(run), "--db", cls.db,
                                           "--json")[1])
                       for run in (cls.completed, cls.oom)}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.folder, ignore_errors=True)
