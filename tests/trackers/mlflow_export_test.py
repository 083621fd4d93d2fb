"""`runs export --to mlflow` and `run --mlflow` against a real `mlflow server` on 127.0.0.1,
read back with MLflow's own client, and a refusal; servers that are down or not MLflow are
mlflow_unreachable_test.py's."""

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.request

from mlflow.tracking import MlflowClient

from tracker_fixture import (COMMAND_TIMEOUT_S, CLI, SEND_EVERY_S, RunsFixture, cli,
                             expected_series, flattened_config, free_port)

SERVER_START_TIMEOUT_S = 90


# `mlflow server`, in one process (the script says why).
SERVER_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "support",
                             "mlflow_server.py")


class MlflowServer:
    """`mlflow server` with a temporary SQLite backend and artifact folder, in its own process
    group so that stopping it leaves no worker behind."""

    def __init__(self, folder):
        self.port = free_port()
        self.uri = f"http://127.0.0.1:{self.port}"
        self.log = open(os.path.join(folder, "mlflow-server.log"), "w", encoding="utf-8")
        # A store already migrated (scripts/tracker_env.sh makes it), no job runner (for
        # MLflow's GenAI jobs, which nothing here uses) and one process (SERVER_SCRIPT): it
        # answers in 2.4 s instead of 10.
        database = os.path.join(folder, "mlflow.sqlite")
        template = os.path.join(sys.prefix, "mlflow-empty.sqlite")
        if os.path.exists(template):
            shutil.copyfile(template, database)
        self.process = subprocess.Popen(
            [sys.executable, SERVER_SCRIPT, "--host", "127.0.0.1", "--port", str(self.port),
             "--workers", "1", "--backend-store-uri", "sqlite:///" + database,
             "--artifacts-destination", os.path.join(folder, "mlflow-artifacts")],
            stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True,
            env={**os.environ, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"})
        deadline = time.monotonic() + SERVER_START_TIMEOUT_S
        while True:
            try:
                with urllib.request.urlopen(self.uri + "/health", timeout=2) as answer:
                    if answer.status == 200:
                        return
            except OSError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()  # closes its log, which goes with the test class's folder:
                with open(self.log.name, encoding="utf-8", errors="replace") as log:
                    said = "".join(log.readlines()[-15:])  # its end is the message
                raise RuntimeError(f"mlflow server did not start on {self.uri}; its log ends:\n"
                                   f"{said}")
            time.sleep(0.5)

    def stop(self):
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self.log.close()
        # Its workers end after it: nothing of its process group may be left.
        deadline = time.monotonic() + 20
        while group_alive(self.process.pid):
            if time.monotonic() > deadline:
                os.killpg(self.process.pid, signal.SIGKILL)
                raise AssertionError("mlflow server's workers outlived it by 20 s")
            time.sleep(0.2)


def group_alive(group):
    try:
        os.killpg(group, 0)
        return True
    except ProcessLookupError:
        return False


class WithMlflowServer:
    """A test class's own server (started in cls.folder) and MLflow's client of it."""

    @classmethod
    def start_server(cls):
        cls.server = MlflowServer(cls.folder)
        cls.client = MlflowClient(tracking_uri=cls.server.uri)

    def mlflow_runs(self, run, experiment="OOM Lab"):
        found = self.client.get_experiment_by_name(experiment)
        return self.client.search_runs(
            [found.experiment_id],
            f"tags.`oomlab.run_id` = '{run}'") if found else []


class OwnMlflowServer(WithMlflowServer, unittest.TestCase):
    """A test class with a folder and a server of its own, stopped and removed after it."""

    @classmethod
    def setUpClass(cls):
        cls.folder = os.path.realpath(tempfile.mkdtemp(prefix="oomlab-mlflow-"))
        cls.addClassCleanup(shutil.rmtree, cls.folder, ignore_errors=True)
        cls.start_server()
        cls.addClassCleanup(cls.server.stop)  # cleanups run last first: before the removal


class MlflowExport(WithMlflowServer, RunsFixture):
    """`runs export --to mlflow` of the two runs."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.start_server()

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()
        super().tearDownClass()

    def export(self, *runs, experiment="OOM Lab", check=True):
        return cli("runs", "export", *map(str, runs), "--db", self.db, "--to", "mlflow",
                   "--tracking-uri", self.server.uri, "--experiment", experiment, "--json",
                   check=check)

    def test_mlflow_sends_no_usage_telemetry(self):
        """The suite's MLflow processes (this client, the server it started with the same
        environment) reach nothing beyond 127.0.0.1: MLflow's telemetry, on by default, looks up
        and sends to config.mlflow-telemetry.io (tests/trackers/CMakeLists.txt turns it off)."""
        from mlflow.telemetry.utils import is_telemetry_disabled
        self.assertTrue(is_telemetry_disabled())

    def test_two_runs_read_back_by_mlflow_client(self):
        _, out, _ = self.export(self.completed, self.oom)
        replies = [json.loads(line) for line in out.splitlines()]
        self.assertEqual([reply["run"] for reply in replies], [self.completed, self.oom])
        for run, status in ((self.completed, "FINISHED"), (self.oom, "FAILED")):
            with self.subTest(run=run):
                export = self.exports[run]
                [mlflow_run] = self.mlflow_runs(run)
                self.assertEqual(mlflow_run.info.status, status)
                self.assertEqual(mlflow_run.info.run_name, export["name"])
                self.assertEqual(mlflow_run.data.tags["oomlab.status"], export["status"])
                expected_params = {key: value if isinstance(value, str) else json.dumps(value)
                                   for key, value in flattened_config(export["config"]).items()}
                self.assertEqual(mlflow_run.data.params, expected_params)
                expected = expected_series(export)
                self.assertIn("train/loss", expected)
                for name, points in expected.items():
                    history = self.client.get_metric_history(mlflow_run.info.run_id, name)
                    self.assertEqual(sorted((m.step, m.value) for m in history), points, name)
                self.assertEqual(mlflow_run.data.metrics["peak/total_MiB"],
                                 export["peak_bytes"] / (1 << 20))
                for category, value in export["prediction"]["breakdown"].items():
                    self.assertEqual(mlflow_run.data.metrics[f"predicted/{category}_MiB"],
                                     value / (1 << 20))
                artifacts = [a.path for a in self.client.list_artifacts(mlflow_run.info.run_id)]
                self.assertEqual(artifacts, ["run.json", "summary.json"])
                path = self.client.download_artifacts(mlflow_run.info.run_id, "summary.json",
                                                      os.path.join(self.folder, f"dl{run}"))
                with open(path, encoding="utf-8") as file:
                    self.assertEqual(json.load(file)["run_id"], run)
                # The whole run, as `runs export --json` writes it: every phase's rows, events.
                path = self.client.download_artifacts(mlflow_run.info.run_id, "run.json",
                                                      os.path.join(self.folder, f"dl{run}"))
                with open(path, encoding="utf-8") as file:
                    self.assertEqual(json.load(file), export)
                self.assertEqual(mlflow_run.data.tags["oomlab.whole_run"], "run.json")
        self.assertIn("eval/accuracy", expected_series(self.exports[self.completed]))
        self.assertIn("out of memory", self.mlflow_runs(self.oom)[0].data.tags["oomlab.error"])

    def test_exporting_again_does_not_duplicate(self):
        self.export(self.completed, experiment="twice")
        first = self.mlflow_runs(self.completed, "twice")
        _, out, _ = self.export(self.completed, experiment="twice")
        self.assertTrue(json.loads(out)["unchanged"])
        self.assertEqual([r.info.run_id for r in self.mlflow_runs(self.completed, "twice")],
                         [r.info.run_id for r in first])
        # A run changed since (its tags) replaces the earlier export: still one run.
        cli("runs", "tag", str(self.completed), "--db", self.db, "baseline")
        try:
            _, out, _ = self.export(self.completed, experiment="twice")
            self.assertTrue(json.loads(out)["replaced"])
            [again] = self.mlflow_runs(self.completed, "twice")
            self.assertEqual(again.data.tags["oomlab.tags"], "baseline")
            history = self.client.get_metric_history(again.info.run_id, "train/loss")
            self.assertEqual(len(history), len(expected_series(
                self.exports[self.completed])["train/loss"]))
        finally:
            cli("runs", "tag", str(self.completed), "--db", self.db, "")

    def test_a_name_given_since_replaces_the_run_under_it(self):
        self.export(self.completed, experiment="renamed")
        _, out, _ = self.export(self.completed, "--user", "ada", experiment="renamed")
        self.assertTrue(json.loads(out)["replaced"])
        [again] = self.mlflow_runs(self.completed, "renamed")
        self.assertEqual(again.data.tags["mlflow.user"], "ada")

    def test_a_server_whose_database_is_locked_a_moment_is_waited_for(self):
        """Its database locked for a moment (as when a class's runs end together): the export
        waits for the server and the run arrives, once. MLflow 3 waits up to 20 s for the lock
        itself; before, it answered 500 after SQLite's 5 s, and a server that answers so is
        asked again (mlflow_unreachable_test's busy server)."""
        database = sqlite3.connect(os.path.join(self.folder, "mlflow.sqlite"),
                                   isolation_level=None, check_same_thread=False)
        database.execute("BEGIN EXCLUSIVE")
        unlock = threading.Timer(2, lambda: database.execute("COMMIT"))
        unlock.start()
        try:
            code, out, err = self.export(self.completed, experiment="busy", check=False)
        finally:
            unlock.join()
            database.close()
        self.assertEqual(code, 0, err)
        self.assertEqual(json.loads(out)["run"], self.completed)
        self.assertEqual(len(self.mlflow_runs(self.completed, "busy")), 1)

    def test_a_deleted_experiment_is_refused(self):
        experiment = self.client.create_experiment("deleted")
        self.client.delete_experiment(experiment)
        code, _, err = self.export(self.completed, experiment="deleted", check=False)
        self.assertEqual(code, 1)
        self.assertIn("the experiment \"deleted\" was deleted there", err)


class MlflowLiveRun(OwnMlflowServer):
    """`run --mlflow`: a run sent while it trains, at its end, or ended by the next run; a
    class of its own, with its own server, that ctest runs beside MlflowExport."""

    def test_run_mirrors_itself_when_it_ends(self):
        snapshot = os.path.join(self.folder, "mirrored.pickle")
        _, out, _ = cli("run", "--db", os.path.join(self.folder, "mirrored.sqlite"), "--name",
                        "mirrored", "--set", "train.max_steps=3", "--set",
                        "debug.memory_snapshot=" + snapshot, "--mlflow", self.server.uri,
                        "--mlflow-experiment", "mirrored", "--json")
        lines = [json.loads(line) for line in out.splitlines()]
        summary = lines[-1]
        self.assertEqual(summary["status"], "completed")
        mirrored = [line for line in lines if line.get("to") == "mlflow"]
        self.assertEqual(len(mirrored), 1)
        found = self.client.get_run(mirrored[0]["mlflow_run_id"])
        self.assertEqual(found.info.status, "FINISHED")
        self.assertEqual(found.data.tags["oomlab.run_id"], str(summary["run_id"]))
        # The run's memory snapshot went with it, whole.
        sizes = {a.path: a.file_size for a in self.client.list_artifacts(found.info.run_id)}
        self.assertEqual(sizes["mirrored.pickle"], os.path.getsize(snapshot))
        self.assertIn("summary.json", sizes)

    def test_a_run_is_on_the_server_while_it_trains(self):
        """`run --mlflow`: the run is made there running, its steps arrive while it trains, and
        it ends there, stopped by its user (Ctrl+C) once two of its steps were seen arriving
        (so that it is seen training however fast the machine), in the same MLflow run, with
        every step once. How long each step took to arrive is printed, not judged
        (bench/class_import.sh measures it for a class)."""
        database = os.path.join(self.folder, "live.sqlite")
        started = time.monotonic()
        saved = []  # (seconds since the start, the step saved then), from the progress lines
        seen = []  # (seconds since the start, MLflow's run, its status, its last loss step)
        stopped = False
        with subprocess.Popen(
                [CLI, "run", "--db", database, "--json", "--mlflow", self.server.uri,
                 "--mlflow-experiment", "live", "--mlflow-every", str(SEND_EVERY_S), "--set",
                 "model.kind=bilstm", "--set", "train.max_steps=20000", "--set", "eval.every=2"],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as process:
            reader = threading.Thread(target=lambda: saved.extend(
                (time.monotonic() - started, line["step"])
                for line in map(json.loads, process.stdout) if line.get("type") == "progress"))
            reader.start()
            try:
                while process.poll() is None:
                    experiment = self.client.get_experiment_by_name("live")
                    runs = (self.client.search_runs([experiment.experiment_id])
                            if experiment else [])
                    if runs:
                        losses = self.client.get_metric_history(runs[0].info.run_id,
                                                                "train/loss")
                        seen.append((time.monotonic() - started, runs[0].info.run_id,
                                     runs[0].info.status,
                                     max((m.step for m in losses), default=0)))
                    during = {one[3] for one in seen if one[2] == "RUNNING" and one[3] > 0}
                    if not stopped and len(during) >= 2 and max(during) >= 4:
                        process.send_signal(signal.SIGINT)  # its user stops it
                        stopped = True
                    time.sleep(SEND_EVERY_S / 2)
            finally:
                process.kill()
                process.wait(timeout=COMMAND_TIMEOUT_S)
                reader.join()
            errors = process.stderr.read()
        # Stopped while a BiLSTM's matrix products ran: the signal never lands in them (it
        # corrupted the heap a third of the time, exit -6).
        self.assertEqual(process.returncode, 130, errors)
        during = [one for one in seen if one[2] == "RUNNING" and one[3] > 0]
        self.assertGreaterEqual(len({one[3] for one in during}), 2,
                                f"no steps seen arriving while it trained: {seen}")
        arrived = [min(t for t, _, _, last in seen if last >= step) - at
                   for at, step in saved if any(last >= step for *_, last in seen)]
        print(f"\nlive run: {len(arrived)} steps seen on the server while it trained, "
              f"{min(arrived):.1f}-{max(arrived):.1f} s after they were saved",
              file=sys.stderr)
        steps = json.loads(cli("runs", "export", "1", "--db", database, "--json")[1])["steps"]
        runs = self.mlflow_runs(1, "live")
        self.assertEqual(len(runs), 1)
        self.assertEqual({one[1] for one in seen}, {runs[0].info.run_id})
        self.assertEqual(runs[0].info.status, "KILLED")
        losses = self.client.get_metric_history(runs[0].info.run_id, "train/loss")
        self.assertEqual(sorted(m.step for m in losses), list(range(1, steps + 1)))
        self.assertIn("eval/accuracy", runs[0].data.metrics)
        self.assertIn("peak/total_MiB", runs[0].data.metrics)

    def test_a_run_sent_once_an_hour_is_sent_whole_at_its_end(self):
        """`--mlflow-every 3600`: nothing reaches the server while the run trains, though it
        trained longer than the default 2 s between sends; stopped, it arrives whole, once."""
        database = os.path.join(self.folder, "hourly.sqlite")
        with subprocess.Popen(
                [CLI, "run", "--db", database, "--json", "--mlflow", self.server.uri,
                 "--mlflow-experiment", "hourly", "--mlflow-every", "3600", "--pace", "slow",
                 "--set", "train.max_steps=20000"],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as process:
            try:
                for line in process.stdout:  # until it trains
                    if json.loads(line).get("type") == "progress":
                        break
                time.sleep(2.5)  # past the default's first send
                self.assertIsNone(process.poll(), "the run ended before it was looked at")
                self.assertEqual(self.mlflow_runs(1, "hourly"), [])
                process.send_signal(signal.SIGINT)
                process.communicate(timeout=COMMAND_TIMEOUT_S)
            finally:
                process.kill()
        self.assertEqual(process.returncode, 130)
        [run] = self.mlflow_runs(1, "hourly")
        self.assertEqual(run.info.status, "KILLED")
        steps = json.loads(cli("runs", "export", "1", "--db", database, "--json")[1])["steps"]
        losses = self.client.get_metric_history(run.info.run_id, "train/loss")
        self.assertEqual(sorted(m.step for m in losses), list(range(1, steps + 1)))

    def test_a_run_killed_while_it_was_sent_is_ended_by_the_next_run(self):
        """A run whose process is killed (SIGKILL: nothing sends its end) stays RUNNING on the
        server, a class's silent run; the next run of the same database sent there ends it,
        whole, in its place, once."""
        database = os.path.join(self.folder, "killed.sqlite")
        sent = ("--mlflow", self.server.uri, "--mlflow-experiment", "killed", "--mlflow-every",
                str(SEND_EVERY_S))
        # Its own process: killed, a copy in the engine server (oomlab.sh test) would outlive
        # it by a moment, and the next run could find it still running.
        with subprocess.Popen([CLI, "run", "--db", database, *sent, "--pace", "slow", "--set",
                               "train.max_steps=20000"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL,
                              env=dict(os.environ, OOMLAB_ENGINE_SERVER="")) as process:
            try:
                deadline = time.monotonic() + COMMAND_TIMEOUT_S
                while True:  # until the server holds some of its steps
                    experiment = self.client.get_experiment_by_name("killed")
                    runs = self.client.search_runs([experiment.experiment_id]) if experiment else []
                    if runs and "train/loss" in runs[0].data.metrics:
                        break
                    self.assertLess(time.monotonic(), deadline, "no step arrived while it trained")
                    time.sleep(0.3)
            finally:
                process.kill()
                process.wait(timeout=COMMAND_TIMEOUT_S)
        self.assertEqual(runs[0].info.status, "RUNNING")
        _, _, err = cli("run", "--db", database, *sent, "--set", "train.max_steps=2")
        self.assertIn("run 1 stopped without its end while it was sent", err)
        runs = {run.data.tags["oomlab.run_id"]: run
                for run in self.client.search_runs([experiment.experiment_id])}
        self.assertEqual(sorted(runs), ["1", "2"])
        self.assertEqual(runs["1"].info.status, "KILLED")
        self.assertEqual(runs["1"].data.tags["oomlab.status"], "interrupted")
        steps = json.loads(cli("runs", "export", "1", "--db", database, "--json")[1])["steps"]
        losses = self.client.get_metric_history(runs["1"].info.run_id, "train/loss")
        self.assertEqual(sorted(m.step for m in losses), list(range(1, steps + 1)))
        _, _, err = cli("run", "--db", database, *sent, "--set", "train.max_steps=2")
        self.assertNotIn("stopped without its end", err)  # ended once


if __name__ == "__main__":
    unittest.main()
