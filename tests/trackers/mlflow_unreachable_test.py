"""`runs export --to mlflow` and `run --mlflow` against servers that are down or are not
MLflow (refusing, busy, thinking, of the wrong shape, never ending): a clear error within the
request's time, and the run database untouched."""

import contextlib
import http.server
import json
import os
import shutil
import tempfile
import threading
import time
import unittest

from tracker_fixture import RunsFixture, cli, free_port


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    """A web server that is not MLflow (it answers 404 to MLflow's API), not logging."""

    def log_message(self, *_):
        pass


def answer_json(handler, reply):
    """Answers the request `handler` holds with 200 and `reply` as JSON."""
    body = json.dumps(reply).encode()
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


class WrongShapeHandler(http.server.BaseHTTPRequestHandler):
    """A server that answers MLflow's calls with JSON of shapes MLflow never sends: the run is
    created, then its artifact URI is a number. It keeps each call's path."""

    calls = []

    def log_message(self, *_):
        pass

    def answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        path = self.path.split("?")[0]
        WrongShapeHandler.calls.append(self.command + " " + path)
        reply = {}
        if path.endswith("experiments/get-by-name"):
            reply = {"experiment": {"experiment_id": "1", "lifecycle_stage": "active"}}
        elif path.endswith("runs/create"):
            reply = {"run": {"info": {"run_id": "r1", "artifact_uri": 5}}}
        answer_json(self, reply)

    do_GET = answer
    do_POST = answer


class BusyHandler(http.server.BaseHTTPRequestHandler):
    """A server that is always busy: 503 to every call with a Retry-After of a second, or
    (`status` 400) MLflow's answer when its database connections stay taken. It counts the
    calls."""

    calls = 0
    status = 503
    QUEUE_POOL = json.dumps({"error_code": "BAD_REQUEST", "message": (
        "QueuePool limit of size 5 overflow 10 reached, connection timed out, timeout 30.00")})

    def log_message(self, *_):
        pass

    def answer(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        BusyHandler.calls += 1
        body = b"" if BusyHandler.status == 503 else BusyHandler.QUEUE_POOL.encode()
        self.send_response(BusyHandler.status)
        self.send_header("Retry-After", "1")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = answer
    do_POST = answer


class ThinkingHandler(http.server.BaseHTTPRequestHandler):
    """A server that is not MLflow and takes 2.5 s before it answers 404, as a busy server
    takes long before its first byte: longer than the 1 s the tests allow a stall."""

    def log_message(self, *_):
        pass

    def answer(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        time.sleep(2.5)
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = answer
    do_POST = answer


class EndlessHandler(http.server.BaseHTTPRequestHandler):
    """A server whose answer never ends: a gibibyte said and sent (`mode` "flood"), or a
    byte every half second ("trickle")."""

    mode = "flood"

    def log_message(self, *_):
        pass

    def answer(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(1 << 30))
        self.end_headers()
        try:
            if EndlessHandler.mode == "flood":
                chunk = b" " * (1 << 20)
                for _ in range(1 << 10):
                    self.wfile.write(chunk)
            else:
                for _ in range(600):
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(0.5)
        except (BrokenPipeError, ConnectionResetError):
            pass

    do_GET = answer
    do_POST = answer


@contextlib.contextmanager
def serving(handler):
    """A server of `handler` on a free port of 127.0.0.1, in a thread: its URI."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class MlflowUnreachable(RunsFixture):
    """Servers that are down or are not MLflow: a clear error, and the database untouched."""

    def runs_list(self):
        return cli("runs", "list", "--db", self.db, "--json")[1]

    def test_server_down(self):
        before = self.runs_list()
        uri = f"http://127.0.0.1:{free_port()}"
        code, _, err = cli("runs", "export", str(self.completed), "--db", self.db, "--to",
                           "mlflow", "--tracking-uri", uri, check=False)
        self.assertEqual(code, 1)
        self.assertIn(f"MLflow at {uri} did not answer", err)
        self.assertIn("nothing was changed in the run database", err)
        self.assertEqual(self.runs_list(), before)
        # A run still ends as it would and is kept; the warning says how to send it later.
        code, out, err = cli("run", "--db", self.db, "--set", "train.max_steps=2", "--mlflow",
                             uri, check=False)
        self.assertEqual(code, 0, err)
        self.assertIn("is saved, but was not sent", err)
        self.assertIn("--to mlflow --tracking-uri " + uri, err)

    def test_an_address_that_is_not_mlflow(self):
        with serving(QuietHandler) as uri:
            code, _, err = cli("runs", "export", str(self.completed), "--db", self.db, "--to",
                               "mlflow", "--tracking-uri", uri, check=False)
        self.assertEqual(code, 1)
        self.assertIn("is this the address of an MLflow tracking server?", err)

    def test_an_answer_of_the_wrong_shape(self):
        logs = os.path.join(self.folder, "wrong-shape-logs")
        with serving(WrongShapeHandler) as uri:
            WrongShapeHandler.calls.clear()
            code, _, err = cli("runs", "export", str(self.completed), "--db", self.db, "--to",
                               "mlflow", "--tracking-uri", uri, check=False)
            self.assertEqual(code, 1)
            self.assertIn(f"MLflow at {uri} answered POST /api/2.0/mlflow/runs/create", err)
            # The run it made there is deleted again: nothing half sent stays RUNNING.
            self.assertIn("POST /api/2.0/mlflow/runs/delete", WrongShapeHandler.calls)
            # A run sent to both trackers as it ends: MLflow's failure is a warning, and
            # TensorBoard still gets the run.
            code, _, err = cli("run", "--db", self.db, "--set", "train.max_steps=2", "--mlflow",
                               uri, "--tensorboard", logs, check=False)
            self.assertEqual(code, 0, err)
            self.assertIn("is saved, but was not sent", err)
            written = [name for _, _, names in os.walk(logs) for name in names]
            self.assertTrue(any(name.startswith("events.out.tfevents.") for name in written),
                            written)

    def test_a_server_that_stays_busy(self):
        """Asked again as many times as OOMLAB_TRACKER_RETRIES says, then named as busy."""
        for status in (503, 400):
            with self.subTest(status=status), serving(BusyHandler) as uri:
                BusyHandler.calls, BusyHandler.status = 0, status
                code, _, err = cli("runs", "export", str(self.completed), "--db", self.db,
                                   "--to", "mlflow", "--tracking-uri", uri, check=False,
                                   env={"OOMLAB_TRACKER_RETRIES": "2"})
                self.assertEqual(code, 1)
                self.assertEqual(BusyHandler.calls, 3)
                self.assertIn(f"MLflow at {uri} answered GET /api/2.0/mlflow/experiments/"
                              f"get-by-name with status {status}, 3 times: it is busy", err)
                # Each wait is told as it begins.
                for retry in (1, 2):
                    self.assertIn(f"with status {status}: asking again in 1 s ({retry} of 2)",
                                  err)

    def test_a_server_that_thinks_long_is_waited_for(self):
        """The time before the answer's first byte is no stall (here 1 s, OOMLAB_TRACKER_STALL_S;
        30 s unset): only the request's 120 s bound it."""
        with serving(ThinkingHandler) as uri:
            code, _, err = cli("runs", "export", str(self.completed), "--db", self.db, "--to",
                               "mlflow", "--tracking-uri", uri, check=False,
                               env={"OOMLAB_TRACKER_STALL_S": "1"})
        self.assertEqual(code, 1)
        self.assertIn("is this the address of an MLflow tracking server?", err)

    def test_a_number_of_retries_that_is_none_is_refused(self):
        """OOMLAB_TRACKER_RETRIES is a whole number from 0 to 100, and the timeout and stall
        seconds from 1 to a week, refused before anything is sent ("abc" was 0, 99999999999
        1,215,752,191; a timeout of "abc" was the default)."""
        uri = f"http://127.0.0.1:{free_port()}"
        for name, value, limits in (
                ("OOMLAB_TRACKER_RETRIES", "abc", "0 to 100"),
                ("OOMLAB_TRACKER_RETRIES", "99999999999", "0 to 100"),
                ("OOMLAB_TRACKER_RETRIES", "-1", "0 to 100"),
                ("OOMLAB_TRACKER_RETRIES", "2.5", "0 to 100"),
                ("OOMLAB_TRACKER_TIMEOUT_S", "abc", "1 to 604800"),
                ("OOMLAB_TRACKER_TIMEOUT_S", "0", "1 to 604800"),
                ("OOMLAB_TRACKER_STALL_S", "30s", "1 to 604800")):
            with self.subTest(name=name, value=value):
                code, _, err = cli("runs", "export", str(self.completed), "--db", self.db,
                                   "--to", "mlflow", "--tracking-uri", uri, check=False,
                                   env={name: value})
                self.assertEqual(code, 2, err)
                self.assertIn(f'{name}="{value}": give a whole number from {limits}', err)
                self.assertNotIn("did not answer", err)

    def test_an_answer_without_end(self):
        """A body past 64 MiB, or trickled, ends the request with words, within its time, and
        is not told as a server that is not there."""
        with serving(EndlessHandler) as uri:
            for mode, words, limits in (
                    # Time enough for 64 MiB from a Python server on a loaded machine (3 s was
                    # not, beside the suite's other test): the size ends it, not the clock.
                    ("flood", "its answer passed 64 MiB", {"OOMLAB_TRACKER_TIMEOUT_S": "30"}),
                    ("trickle", "no whole answer within 2 s", {"OOMLAB_TRACKER_TIMEOUT_S": "2"}),
                    ("trickle", "less than 1 KiB a second for 1 s while it was sent or answered",
                     {"OOMLAB_TRACKER_STALL_S": "1"})):
                with self.subTest(mode=mode, limits=limits):
                    EndlessHandler.mode = mode
                    started = time.monotonic()
                    code, _, err = cli("runs", "export", str(self.completed), "--db", self.db,
                                       "--to", "mlflow", "--tracking-uri", uri, check=False,
                                       env=limits)
                    self.assertEqual(code, 1)
                    # It answered, so it is there: not "did not answer: start it".
                    self.assertIn(f"MLflow at {uri} gave no whole answer to GET ", err)
                    self.assertIn(f"({words}", err)
                    self.assertNotIn("start it", err)
                    # Bounded by the request's time, not by the server (a gibibyte, 300 s).
                    self.assertLess(time.monotonic() - started, 60)

    def test_a_uri_that_is_not_http(self):
        for option in (["runs", "export", str(self.completed), "--db", self.db, "--to",
                        "mlflow", "--tracking-uri", "file:///tmp/mlruns"],
                       ["run", "--db", self.db, "--mlflow", "127.0.0.1:5000"]):
            with self.subTest(command=option[0]):
                code, _, err = cli(*option, check=False)
                self.assertEqual(code, 2)
                self.assertIn("give http://HOST:PORT", err)
        code, _, err = cli("runs", "export", str(self.completed), "--db", self.db, "--to",
                           "mlflow", check=False)
        self.assertEqual(code, 2)
        self.assertIn("--to mlflow needs --tracking-uri", err)

    def test_a_send_interval_out_of_its_range_is_refused(self):
        """`--mlflow-every` from 0.1 s (a request each tenth of a second is already a class's
        server's load) to an hour; refused before anything trains or is sent."""
        uri = f"http://127.0.0.1:{free_port()}"
        for every in ("0", "0.05", "3601", "nan", "2s"):
            with self.subTest(every=every):
                code, out, err = cli("run", "--db", self.db, "--mlflow", uri, "--mlflow-every",
                                     every, check=False)
                self.assertEqual(code, 2, err)
                self.assertIn(f"--mlflow-every: {every}: give the seconds between two sends "
                              "while it trains, from 0.1 to 3600", err)
                self.assertNotIn("did not answer", err)
                self.assertEqual(out, "")


class EndlessPages(http.server.BaseHTTPRequestHandler):
    """A server that names a next page for ever: the same token (runs/search), or a new one with
    nothing on it (metrics/get-history), as a broken proxy or server may; it has no bulk call
    for histories, as MLflow before 2.9."""
    requests = 0

    def log_message(self, *args):
        pass

    def answer(self, body):
        EndlessPages.requests += 1
        answer_json(self, body)

    def do_GET(self):
        if "experiments/get-by-name" in self.path:
            self.answer({"experiment": {"experiment_id": "1", "name": "OOM Lab"}})
        elif "get-history-bulk-interval" in self.path:  # as MLflow before 2.9: no such call
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:  # metrics/get-history: a new token each time, no values
            self.answer({"metrics": [], "next_page_token": f"t{EndlessPages.requests}"})

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        run = {"info": {"run_id": "r1", "start_time": 0, "end_time": 1},
               "data": {"tags": [{"key": "oomlab.run_uid", "value": "cd" * 16},
                                 {"key": "oomlab.export_digest", "value": "x"}],
                        "metrics": [{"key": "train/loss", "value": 1.0, "step": 1}]}}
        self.answer({"runs": [run], "next_page_token": "same"})


class ServerThatNeverEndsItsPages(unittest.TestCase):
    def test_pages_named_again_or_empty_end_the_import_with_words(self):
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), EndlessPages)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.addCleanup(server.shutdown)
        folder = tempfile.mkdtemp(prefix="oomlab-pages-")
        self.addCleanup(shutil.rmtree, folder, ignore_errors=True)
        uri = f"http://127.0.0.1:{server.server_address[1]}"
        code, out, err = cli("runs", "import", "--from", "mlflow", "--tracking-uri", uri, "--db",
                             os.path.join(folder, "runs.sqlite"), check=False)
        self.assertLess(EndlessPages.requests, 20, "a token named again ends the pages")
        self.assertIn("it named a next page it had named before", out + err)
        self.assertIn("a page with nothing on it named a next page", out + err)
        self.assertIn("has no bulk history call (metrics/get-history-bulk-interval, MLflow 2.9 "
                      "and later): each run's series were read one at a time", out + err)
        self.assertEqual(code, 0, err)


if __name__ == "__main__":
    unittest.main()
