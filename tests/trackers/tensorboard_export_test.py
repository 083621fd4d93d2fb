"""`runs export --to tensorboard` read back by TensorBoard's own event reader
(EventAccumulator, with its record checksums) and accepted by `tensorboard --inspect`."""

import glob
import os
import subprocess
import sys
import unittest

import numpy as np
from tensorboard.backend.event_processing import event_accumulator
from tensorboard.plugins.hparams import api_pb2, plugin_data_pb2
from tensorboard.util import tensor_util

from tracker_fixture import RunsFixture, cli, expected_series, flattened_config


class TensorBoardExport(RunsFixture):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.logdir = os.path.join(cls.folder, "tensorboard")
        cli("runs", "export", str(cls.completed), str(cls.oom), "--db", cls.db, "--to",
            "tensorboard", "--out", cls.logdir)

    def run_folder(self, run):
        folders = glob.glob(os.path.join(self.logdir, f"{run}-*"))
        self.assertEqual(len(folders), 1, folders)
        return folders[0]

    def accumulator(self, run):
        reader = event_accumulator.EventAccumulator(
            self.run_folder(run), size_guidance={event_accumulator.SCALARS: 0,
                                                 event_accumulator.TENSORS: 0})
        reader.Reload()
        return reader

    def test_every_scalar_with_its_steps_and_values(self):
        for run in (self.completed, self.oom):
            with self.subTest(run=run):
                reader = self.accumulator(run)
                expected = expected_series(self.exports[run])
                self.assertIn("train/loss", expected)
                for name, points in expected.items():
                    read = [(event.step, event.value) for event in reader.Scalars(name)]
                    # Scalars are 32-bit floats in event files.
                    self.assertEqual(read, [(step, float(np.float32(value)))
                                            for step, value in points], name)
                summary = self.exports[run]
                self.assertAlmostEqual(reader.Scalars("peak/total_MiB")[-1].value,
                                       summary["peak_bytes"] / (1 << 20), places=3)
                for category, value in summary["prediction"]["breakdown"].items():
                    self.assertAlmostEqual(
                        reader.Scalars(f"predicted/{category}_MiB")[-1].value,
                        value / (1 << 20), places=3)
        self.assertIn("eval/accuracy", expected_series(self.exports[self.completed]))

    def test_settings_in_the_hparams_view(self):
        for run, status in ((self.completed, api_pb2.STATUS_SUCCESS),
                            (self.oom, api_pb2.STATUS_FAILURE)):
            with self.subTest(run=run):
                content = self.accumulator(run).PluginTagToContent("hparams")
                start = plugin_data_pb2.HParamsPluginData.FromString(
                    content["_hparams_/session_start_info"]).session_start_info
                config = flattened_config(self.exports[run]["config"])
                self.assertEqual(set(start.hparams), set(config))
                for key, value in config.items():
                    written = start.hparams[key]
                    if isinstance(value, bool):
                        self.assertEqual(written.bool_value, value, key)
                    elif isinstance(value, (int, float)):
                        self.assertEqual(written.number_value, value, key)
                    else:
                        self.assertEqual(written.string_value, value, key)
                end = plugin_data_pb2.HParamsPluginData.FromString(
                    content["_hparams_/session_end_info"]).session_end_info
                self.assertEqual(end.status, status)

    def test_breakdown_as_a_table(self):
        reader = self.accumulator(self.oom)
        table = tensor_util.make_ndarray(reader.Tensors("breakdown")[0].tensor_proto).item()
        self.assertIn(b"| activations and temporaries |", table)
        self.assertIn(b"| **total** |", table)
        text = tensor_util.make_ndarray(reader.Tensors("run")[0].tensor_proto).item()
        self.assertIn(b"oom after 1 steps", text)
        self.assertIn(b"out of memory at step 2", text)

    def test_exporting_again_leaves_one_file_per_run(self):
        before = sorted(glob.glob(os.path.join(self.logdir, "*", "*")))
        cli("runs", "export", str(self.completed), "--db", self.db, "--to", "tensorboard",
            "--out", self.logdir)
        self.assertEqual(sorted(glob.glob(os.path.join(self.logdir, "*", "*"))), before)
        self.assertEqual(len(before), 2)

    def test_tensorboard_inspect_accepts_the_files(self):
        inspected = subprocess.run(
            [os.path.join(os.path.dirname(sys.executable), "tensorboard"), "--inspect",
             "--logdir", self.logdir], capture_output=True, text=True, timeout=120, check=False)
        self.assertEqual(inspected.returncode, 0, inspected.stderr)
        output = inspected.stdout + inspected.stderr
        self.assertIn("train/loss", output)
        self.assertIn("Event statistics for", output)
        self.assertNotIn("outoforder_steps     [(", output)  # written in step order

    def test_an_unwritable_folder_is_refused_by_name(self):
        blocker = os.path.join(self.folder, "a-file")
        with open(blocker, "w", encoding="utf-8") as file:
            file.write("not a folder")
        code, _, err = cli("runs", "export", str(self.completed), "--db", self.db, "--to",
                           "tensorboard", "--out", blocker, check=False)
        self.assertEqual(code, 1)
        self.assertIn(blocker, err)
        code, _, err = cli("runs", "export", str(self.completed), "--db", self.db, "--to",
                           "tensorboard", check=False)
        self.assertEqual(code, 2)
        self.assertIn("--out DIR", err)


if __name__ == "__main__":
    unittest.main()
