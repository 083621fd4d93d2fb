"""`runs import --from mlflow` against a real `mlflow server` on 127.0.0.1: a class of
students, each training on their own machine (a process with its own database and login name)
and sending as their runs end, read back into the lecturer's database whole, once."""

import contextlib
import json
import os
import signal
import subprocess
import time
import unittest

from mlflow.entities import Metric, Param

from mlflow_export_test import OwnMlflowServer
from tracker_fixture import CLI, COMMAND_TIMEOUT_S, SEND_EVERY_S, cli, free_port

STUDENTS = 4
# What a run's summary holds that an import must give back as the student's machine wrote it.
SAME_IN_SUMMARY = ("status", "steps", "final_train_loss", "val_accuracy", "peak_bytes",
                   "wall_seconds", "batch_size", "accumulation", "device", "error", "tags",
                   "breakdown", "by_module", "staircase", "fragmentation", "prediction", "fixes",
                   "world_size", "engine_version", "torch_version")
# The rows MLflow holds: a step's end and a validation's, to the millisecond.
SERIES_FIELDS = ("loss", "accuracy", "allocated_bytes", "reserved_bytes", "peak_bytes",
                 "device_used_bytes", "samples_per_s")


def student_settings(i):
    """Every third student runs out of memory under a cap; the others differ in batch size."""
    if i % 3 == 2:
        return ["--name", "capped", "--set", "model.kind=bilstm", "--set", "train.max_steps=30",
                "--set", "memory.cap_mb=50"]
    return ["--name", f"batch {16 * (i + 1)}", "--set", "train.max_steps=8", "--set",
            "eval.every=4", "--set", f"train.batch_size={16 * (i + 1)}"]


def series_rows(export):
    return [(row["step"], row["phase"], *(row[f] for f in SERIES_FIELDS), row["wall_ms"])
            for row in export["metrics"] if row["phase"] in ("step", "eval")
            and row["loss"] is not None]


class WithClassServer(OwnMlflowServer):
    """A class's server, in a folder of its own, and what the import tests do with it."""

    def import_runs(self, db, *extra, check=True):
        return cli("runs", "import", "--from", "mlflow", "--tracking-uri", self.server.uri,
                   "--db", db, *extra, check=check)

    def read_from_its_series(self, run_id):
        """The run as a version before the whole run's upload sent it (or a server that did
        not take it): without its oomlab.whole_run tag, an import reads its series."""
        self.client.delete_tag(run_id, "oomlab.whole_run")


class MlflowImport(WithClassServer):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # The class: every student at once, each sending when their run ends. Half share a
        # lab's account and give their name; the others are known by their login name.
        students = []
        for i in range(STUDENTS):
            db = os.path.join(cls.folder, f"student-{i}.sqlite")
            named = ["--mlflow-user", f"student-{i}"] if i % 2 == 0 else []
            students.append((db, subprocess.Popen(
                [CLI, "run", "--db", db, "--mlflow", cls.server.uri, *named,
                 *student_settings(i)],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                env={**os.environ, "LOGNAME": "lab" if named else f"student-{i}"})))
        for db, process in students:
            cls.addClassCleanup(process.kill)
            _, err = process.communicate(timeout=COMMAND_TIMEOUT_S)
            assert process.returncode in (0, 3), err
            assert "was not sent" not in err, err
        cls.students = [json.loads(cli("runs", "export", "1", "--db", db, "--json")[1])
                        for db, _ in students]

    def test_a_class_is_imported_whole_and_once(self):
        db = os.path.join(self.folder, "lecturer.sqlite")
        reply = json.loads(self.import_runs(db, "--json")[1])
        self.assertEqual(len(reply["imported"]), STUDENTS)
        self.assertEqual(reply["on_server"], STUDENTS)
        imported = {}
        for run_id in reply["imported"]:
            export = json.loads(cli("runs", "export", str(run_id), "--db", db, "--json")[1])
            imported[export["name"]] = export
        for i, student in enumerate(self.students):
            with self.subTest(student=i):
                run = imported[f"student-{i}: {student['name']}"]
                for key in SAME_IN_SUMMARY:
                    self.assertEqual(run[key], student[key], key)
                self.assertEqual(run["config"], student["config"])
                got, want = series_rows(run), series_rows(student)
                self.assertEqual([r[:-1] for r in got], [r[:-1] for r in want])
                for (*_, wall), (*_, expected_wall) in zip(got, want):
                    self.assertLess(abs(wall - expected_wall), 1.0)
                # Sent whole (run.json): every phase's rows and the events, as they were.
                self.assertEqual(run["metrics"], student["metrics"])
                self.assertEqual(run["events"], student["events"])
        self.assertFalse([note for note in reply["notes"] if "are not there" in note], reply)
        self.assertEqual(sum(run["status"] == "oom" for run in imported.values()),
                         sum(i % 3 == 2 for i in range(STUDENTS)))
        again = json.loads(self.import_runs(db, "--json")[1])
        self.assertEqual(again["imported"], [])
        self.assertEqual(again["already_here"], STUDENTS)
        self.assertEqual(len(json.loads("[" + ",".join(
            cli("runs", "list", "--db", db, "--json")[1].split()) + "]")), STUDENTS)

    def test_the_class_as_it_trains_is_every_student_with_their_series(self):
        """`runs class`: each student's state and series by step, as their database holds
        them; a run still training is there, running, its steps coming in."""
        reply = json.loads(cli("runs", "class", "--tracking-uri", self.server.uri, "--json")[1])
        runs = {run["student"]: run for run in reply["runs"]
                if run["student"].startswith("student-") and run["whole"]}
        self.assertEqual(len(runs), STUDENTS)
        for i, student in enumerate(self.students):
            with self.subTest(student=i):
                run = runs[f"student-{i}"]
                self.assertEqual(run["name"], student["name"])
                self.assertEqual(run["status"], student["status"])
                losses = [[row["step"], row["loss"]] for row in student["metrics"]
                          if row["phase"] == "step" and row["loss"] is not None]
                self.assertEqual([step for step, _ in run["loss"]], [s for s, _ in losses])
                for (_, got), (_, want) in zip(run["loss"], losses):
                    self.assertAlmostEqual(got, want, places=5)
                self.assertEqual(len(run["reserved_MiB"]), len(losses))
        first_line = cli("runs", "class", "--tracking-uri", self.server.uri)[1].splitlines()[0]
        self.assertIn(" completed, ", first_line)
        self.assertIn(" out of memory", first_line)

        # A student still training: running, with steps past the first, then completed.
        db = os.path.join(self.folder, "live-student.sqlite")
        student = subprocess.Popen(
            [CLI, "run", "--db", db, "--mlflow", self.server.uri, "--mlflow-experiment", "live",
             "--mlflow-every", str(SEND_EVERY_S), "--pace", "slow", "--set",
             "train.max_steps=100000"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env={**os.environ, "LOGNAME": "late"})
        self.addCleanup(student.kill)
        seen = None
        for _ in range(600):
            ran = subprocess.run([CLI, "runs", "class", "--tracking-uri", self.server.uri,
                                  "--experiment", "live", "--json"], capture_output=True,
                                 text=True, timeout=COMMAND_TIMEOUT_S, check=False)
            live = json.loads(ran.stdout)["runs"] if ran.returncode == 0 else []
            if live and live[0]["loss"] and live[0]["loss"][-1][0] > 1:
                seen = live[0]
                break
            time.sleep(0.1)
        self.assertIsNotNone(seen, "the run was not seen while it trained")
        self.assertEqual((seen["student"], seen["status"], seen["whole"]),
                         ("late", "running", False))
        student.send_signal(signal.SIGINT)  # stopped by its student: it ends, sent whole
        self.assertEqual(student.wait(timeout=COMMAND_TIMEOUT_S), 130)
        ended = json.loads(cli("runs", "class", "--tracking-uri", self.server.uri,
                               "--experiment", "live", "--json")[1])["runs"]
        self.assertEqual([(run["status"], run["whole"]) for run in ended], [("cancelled", True)])

    def test_an_out_of_memory_says_whether_its_free_memory_was_in_pieces(self):
        """How the free memory lay at an out-of-memory is a tag where it was measured (the
        allocator modelled under a cap: more free than asked, in pieces, at the first step, as
        oom_fixes_test's fragmented CPU run), and never guessed where it was not (the capped
        students' BiLSTMs)."""
        cli("run", "--db", os.path.join(self.folder, "fragmented.sqlite"), "--mlflow",
            self.server.uri, "--mlflow-experiment", "fragments", "--set", "model.kind=transformer",
            "--set", "train.batch_size=128", "--set", "memory.cap_mb=210", "--set",
            "train.max_steps=3", "--set", "memory.alloc_conf=backend:native", check=False)
        [fragmented] = self.client.search_runs(
            [self.client.get_experiment_by_name("fragments").experiment_id])
        self.assertEqual(fragmented.data.tags.get("oomlab.status"), "oom")
        self.assertEqual(fragmented.data.tags.get("oomlab.fragmented"), "true")
        capped = [run for run in self.client.search_runs(
            [self.client.get_experiment_by_name("OOM Lab").experiment_id])
            if run.data.tags.get("oomlab.status") == "oom"]
        self.assertTrue(capped)
        for run in capped:
            self.assertNotIn("oomlab.fragmented", run.data.tags)

    def test_other_programs_runs_and_runs_being_sent_are_left_there(self):
        experiment = self.client.get_experiment_by_name("OOM Lab").experiment_id
        other = self.client.create_run(experiment, run_name="someone else's")
        self.client.set_terminated(other.info.run_id)
        half = self.client.create_run(experiment, tags={"oomlab.run_uid": "ab" * 16})
        try:
            db = os.path.join(self.folder, "mixed.sqlite")
            reply = json.loads(self.import_runs(db, "--json")[1])
            self.assertEqual(reply["not_from_oomlab"], 1)
            self.assertEqual(reply["being_sent"], 1)
            self.assertEqual(len(reply["imported"]), STUDENTS)
        finally:
            self.client.delete_run(other.info.run_id)
            self.client.delete_run(half.info.run_id)

    @contextlib.contextmanager
    def artifacts_set_aside(self, student, names=("summary.json", "run.json")):
        """The server's files of the student's run, moved aside for the block (the block may
        write others there); yields the first one's path and the run's id."""
        experiment = self.client.get_experiment_by_name("OOM Lab").experiment_id
        [sent] = self.client.search_runs([experiment],
                                         f"tags.`mlflow.user` = 'student-{student}'")
        paths = [os.path.join(self.folder, "mlflow-artifacts", experiment, sent.info.run_id,
                              "artifacts", name) for name in names]
        for path in paths:
            os.rename(path, path + ".kept")
        try:
            yield paths[0], sent.info.run_id
        finally:
            for path in paths:
                os.replace(path + ".kept", path)

    def test_without_its_summary_a_run_keeps_what_tags_and_final_values_say(self):
        with self.artifacts_set_aside(0) as (_, mlflow_id):
            db = os.path.join(self.folder, "no-summary.sqlite")
            _, out, _ = self.import_runs(db)
            # Once, with the count, whatever the number of runs.
            self.assertIn(f"does not serve summary.json for some runs (1 run: {mlflow_id})", out)
            self.assertEqual(out.count("summary.json"), 1, out)
        runs = [json.loads(line) for line in cli("runs", "list", "--db", db, "--json")[1].split("\n")
                if line]
        [run] = [r for r in runs if r["name"].startswith("student-0: ")]
        student = self.students[0]
        for key in ("status", "steps", "final_train_loss", "val_accuracy", "peak_bytes",
                    "breakdown", "device", "engine_version"):
            self.assertEqual(run[key], student[key], key)
        self.assertEqual(run["by_module"], [], "not on the server: not guessed")

    def test_a_run_that_cannot_be_read_is_skipped_and_named(self):
        with self.artifacts_set_aside(1, ["run.json"]) as (whole_run, run_id):
            with open(whole_run, "w") as broken:
                broken.write("{ not JSON")
            db = os.path.join(self.folder, "one-broken.sqlite")
            _, out, _ = self.import_runs(db)
        self.assertIn(f"run {run_id}", out)
        self.assertIn("a run was left on the server", out)
        runs = cli("runs", "list", "--db", db, "--json")[1].strip().split("\n")
        self.assertEqual(len(runs), STUDENTS - 1, "the others are imported")

    def test_figures_no_run_can_have_are_left_out_and_said(self):
        """A run's series with memory of -5 MiB, 1e300 or "Infinity", a rank of -1, or a step
        below 0 are left out and said (they were stored as -5 MiB and INT64_MIN); a summary with
        a peak of -5 bytes is refused by key and its run left on the server."""
        student_db = os.path.join(self.folder, "student-3.sqlite")
        cli("runs", "export", "1", "--db", student_db, "--to", "mlflow", "--tracking-uri",
            self.server.uri, "--experiment", "figures")
        experiment = self.client.get_experiment_by_name("figures").experiment_id
        [sent] = self.client.search_runs([experiment])
        run_id = sent.info.run_id
        self.read_from_its_series(run_id)
        for key, value, step in (("memory/peak_MiB", -5.0, 900), ("memory/peak_MiB", 1e300, 901),
                                 ("memory/allocated_MiB", float("inf"), 902),
                                 ("memory/peak_MiB", 1.0, -3), ("rank -1/memory/peak_MiB", 1.0, 1)):
            self.client.log_metric(run_id, key, value, step=step)
        db = os.path.join(self.folder, "figures.sqlite")
        _, out, _ = self.import_runs(db, "--experiment", "figures")
        self.assertIn(f"run {run_id}: 4 metric values no run can have", out)
        self.assertIn('series "rank -1/memory/peak_MiB" names no rank from 0 to 65535', out)
        export = json.loads(cli("runs", "export", "1", "--db", db, "--json")[1])
        for row in export["metrics"]:
            for field in ("peak_bytes", "allocated_bytes"):
                self.assertTrue(row[field] is None or 0 <= row[field] < 2**50, row)
            self.assertGreaterEqual(row["step"], 0, row)
            self.assertGreaterEqual(row["rank"], 0, row)
        self.assertEqual([r[:-1] for r in series_rows(export)],  # to the millisecond
                         [r[:-1] for r in series_rows(self.students[3])])

        summary = os.path.join(self.folder, "mlflow-artifacts", experiment, run_id,
                               "artifacts", "summary.json")
        with open(summary) as kept:
            changed = json.load(kept)
        changed["peak_bytes"] = -5
        with open(summary, "w") as out_file:
            json.dump(changed, out_file)
        _, out, _ = self.import_runs(os.path.join(self.folder, "figures-2.sqlite"),
                                     "--experiment", "figures")
        self.assertIn("peak_bytes is -5, not a whole number from 0 to 1125899906842624", out)
        self.assertIn("a run was left on the server", out)

    def test_a_uid_oomlab_never_sends_is_refused_and_unknown_settings_are_one_note(self):
        """A run whose oomlab.run_uid tag is not hexadecimal digits (a path, a newline) is left
        on the server and named; 2,000 settings this version does not know are one note with
        their count (a note each, found in quadratic time, before)."""
        student_db = os.path.join(self.folder, "student-1.sqlite")
        cli("runs", "export", "1", "--db", student_db, "--to", "mlflow", "--tracking-uri",
            self.server.uri, "--experiment", "uids")
        experiment = self.client.get_experiment_by_name("uids").experiment_id
        [sent] = self.client.search_runs([experiment])
        self.read_from_its_series(sent.info.run_id)
        for first in range(0, 2000, 100):  # MLflow takes 100 parameters a call
            self.client.log_batch(sent.info.run_id, params=[
                Param(f"future.setting_{i:04d}", "1") for i in range(first, first + 100)])
        _, out, _ = self.import_runs(os.path.join(self.folder, "uids.sqlite"),
                                     "--experiment", "uids")
        self.assertIn("imported 1 run(s)", out)
        self.assertIn("2000 settings this version does not know, left at their defaults: "
                      "future.setting_0000=1, ", out)
        self.assertIn("and 1995 more", out)
        self.assertEqual(out.count("does not know"), 1, out)

        self.client.set_tag(sent.info.run_id, "oomlab.run_uid", "../../etc\nx")
        _, out, _ = self.import_runs(os.path.join(self.folder, "uids-2.sqlite"),
                                     "--experiment", "uids")
        self.assertIn("imported 0 run(s)", out)
        self.assertIn(f"run {sent.info.run_id}'s oomlab.run_uid tag is", out)
        self.assertIn("which OOM Lab never sends", out)

    def test_an_experiment_the_server_does_not_have_is_named(self):
        code, _, err = self.import_runs(os.path.join(self.folder, "none.sqlite"), "--experiment",
                                        "no such class", check=False)
        self.assertEqual(code, 2, err)
        self.assertIn('has no experiment "no such class"', err)

    def test_a_server_that_is_down_changes_nothing(self):
        db = os.path.join(self.folder, "down.sqlite")
        self.import_runs(db)
        before = cli("runs", "list", "--db", db, "--json")[1]
        uri = f"http://127.0.0.1:{free_port()}"
        code, _, err = cli("runs", "import", "--from", "mlflow", "--tracking-uri", uri, "--db", db,
                           check=False)
        self.assertEqual(code, 1)
        self.assertIn(f"MLflow at {uri} did not answer", err)
        self.assertEqual(cli("runs", "list", "--db", db, "--json")[1], before)


class OwnRuns(WithClassServer):
    """Imports of runs that each test sends itself, not the class of students: a class of its
    own, with its own server, that ctest runs beside MlflowImport."""

    def test_the_class_predictions_are_counted_against_each_students_runs(self):
        """`lesson run --predict --mlflow`: each of the lesson's runs carries the prediction;
        `runs class --predictions` counts the answers, what each student's runs measured, and
        who disagrees."""
        answers = {"ann": "batch 128,over-3x", "bob": "same,under-1.5x"}
        for student, answer in answers.items():
            _, out, _ = cli("lesson", "run", "batch-size", "--db",
                            os.path.join(self.folder, f"lesson-{student}.sqlite"), "--mlflow",
                            self.server.uri, "--mlflow-experiment", "predictions", "--mlflow-user",
                            student, "--predict", answer, "--set", "train.max_steps=1")
            self.assertIn("you predicted: ", out)
        [lesson] = json.loads(cli("runs", "class", "--tracking-uri", self.server.uri,
                                  "--experiment", "predictions", "--predictions",
                                  "--json")[1])["lessons"]
        self.assertEqual((lesson["lesson"], lesson["students"]), ("batch-size", 2))
        self.assertEqual(sorted(a["answer"] for a in lesson["predicted"]),
                         ["batch 128 needs the most, more than 3 times the least",
                          "they need about the same, less than 1.5 times the least"])
        self.assertEqual(lesson["measured"], [
            {"answer": "batch 128 needs the most, more than 3 times the least", "students": 2}])
        self.assertEqual([d["student"] for d in lesson["disagreeing"]], ["bob"])
        text = cli("runs", "class", "--tracking-uri", self.server.uri, "--experiment",
                   "predictions", "--predictions")[1]
        self.assertIn("batch-size: 2 students predicted", text)
        self.assertIn("1 student's runs disagree with their prediction:\n  bob: ", text)
        # Sent again later (`runs export`), bob's runs keep their lesson and prediction: each
        # is unchanged, not replaced by a run without them, and the class still counts him.
        bob = os.path.join(self.folder, "lesson-bob.sqlite")
        runs = [str(json.loads(line)["run_id"]) for line in
                cli("runs", "list", "--db", bob, "--json")[1].split("\n") if line.strip()]
        _, out, _ = cli("runs", "export", *runs, "--db", bob, "--to", "mlflow", "--tracking-uri",
                        self.server.uri, "--experiment", "predictions", "--user", "bob", "--json")
        self.assertEqual([json.loads(line).get("unchanged") for line in out.split("\n")
                          if line.strip()], [True] * len(runs))
        [again] = json.loads(cli("runs", "class", "--tracking-uri", self.server.uri,
                                 "--experiment", "predictions", "--predictions",
                                 "--json")[1])["lessons"]
        self.assertEqual(again["students"], 2)
        # The lecturer's import keeps them too: the runs sent once more from there carry them.
        lecturer = os.path.join(self.folder, "predictions-lecturer.sqlite")
        self.import_runs(lecturer, "--experiment", "predictions")
        imported = json.loads(cli("runs", "export", "1", "--db", lecturer, "--json")[1])
        self.assertEqual(imported["tracker_tags"]["oomlab.lesson"], "batch-size")

    def test_a_series_longer_than_the_bulk_answer_is_read_whole(self):
        """A hundred runs' series come in one bulk request of at most 2,500 values a run, past
        which MLflow samples them: a run that reaches it is read on its own, every value."""
        db = os.path.join(self.folder, "long-student.sqlite")
        cli("run", "--db", db, "--mlflow", self.server.uri, "--mlflow-experiment", "long",
            "--set", "train.max_steps=4", "--set", "eval.every=0")
        run = self.client.search_runs(
            [self.client.get_experiment_by_name("long").experiment_id])[0]
        self.read_from_its_series(run.info.run_id)
        first = run.info.start_time
        for start in range(100, 3100, 1000):
            self.client.log_batch(run.info.run_id, metrics=[
                Metric("train/loss", 1.0 / step, first + step, step)
                for step in range(start, start + 1000)])
        lecturer = os.path.join(self.folder, "long-lecturer.sqlite")
        reply = json.loads(self.import_runs(lecturer, "--experiment", "long", "--json")[1])
        self.assertEqual(len(reply["imported"]), 1, reply)
        export = json.loads(cli("runs", "export", str(reply["imported"][0]), "--db", lecturer,
                                "--json")[1])
        steps = [row["step"] for row in export["metrics"]
                 if row["phase"] == "step" and row["loss"] is not None]
        self.assertEqual(steps, [1, 2, 3, 4, *range(100, 3100)])
        # For the class's plots, a sample the server chose: its first and last steps among it.
        [live] = json.loads(cli("runs", "class", "--tracking-uri", self.server.uri,
                                "--experiment", "long", "--json")[1])["runs"]
        sampled = [step for step, _ in live["loss"]]
        self.assertLessEqual(len(sampled), 500)
        self.assertGreater(len(sampled), 400)
        self.assertEqual((sampled[0], sampled[-1]), (1, 3099))


if __name__ == "__main__":
    unittest.main()
