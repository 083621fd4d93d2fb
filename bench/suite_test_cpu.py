#!/usr/bin/env python3
"""The CPU time of each test of the suite: every test ctest lists (`--show-only=json-v1`) runs
with its own command, folder and environment, JOBS at a time (the fixtures' setups first), and
its CPU is read with wait4: the test's process and every process it waited for (a server it
started and killed without waiting is not counted). Prints the costliest tests and the totals.
bench/suite_cpu.sh sums the same suite's CPU by program instead.

With --engine-server the tests' processes that train start in copies of one loaded engine,
as `./oomlab.sh test` runs them (oomlab/session/engine_server.h). A copy is its server's child,
not the test's: its CPU, from the server's log, is added to the test whose environment its
starter had (each test is given OOMLAB_SUITE_TEST=N, read from /proc while the starter waits
for its copy).

    bench/suite_test_cpu.py [--build-dir build] [--jobs 2] [--top 40] [-R REGEX]
                            [--engine-server]
"""

import argparse
import concurrent.futures
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time


def listed_tests(build_dir, pattern):
    shown = subprocess.run(["ctest", "--test-dir", build_dir, "--show-only=json-v1"],
                           capture_output=True, text=True, check=True)
    tests = []
    for test in json.loads(shown.stdout)["tests"]:
        if pattern and not re.search(pattern, test["name"]):
            continue
        properties = {p["name"]: p["value"] for p in test.get("properties", [])}
        if properties.get("DISABLED"):
            continue
        tests.append({
            "name": test["name"],
            "setup": bool(properties.get("FIXTURES_SETUP")),
            "command": test["command"],
            "folder": properties.get("WORKING_DIRECTORY", build_dir),
            "environment": properties.get("ENVIRONMENT", []),
        })
    return tests


class EngineServers:
    """The engine servers `./oomlab.sh test` starts (oomlab-cli's and the test programs' that
    train), and a thread for each that follows its log: each copy's CPU, by the
    OOMLAB_SUITE_TEST of the command's starter."""

    PROGRAMS = ("app/oomlab-cli", "tests/engine/train/oomlab_train_tests",
                "tests/ui/oomlab_ui_tests")

    def __init__(self, build_dir):
        self.folder = tempfile.mkdtemp(prefix="oomlab-suite-cpu-")
        self.test_of_copy = {}  # (log, copy's pid) -> the test's number, or None where unseen
        self.cpu_of_test = {}
        self.unattributed = 0.0
        self.stopping = False
        self.processes, self.threads = [], []
        for program in self.PROGRAMS:
            path = os.path.join(build_dir, program)
            if not os.path.exists(path):
                continue
            name = os.path.basename(program)
            log = os.path.join(self.folder, f"engine-server-{name}.log")
            self.processes.append(subprocess.Popen(
                [path, "engine-server", self.folder], stderr=open(log, "w"),
                env={**os.environ, "OMP_NUM_THREADS": "1"}))
            while not os.path.exists(os.path.join(self.folder, name)):
                if self.processes[-1].poll() is not None:
                    sys.exit(f"the engine server of {name} did not start: {log}")
                time.sleep(0.1)
            self.threads.append(threading.Thread(target=self.follow, args=(log,), daemon=True))
            self.threads[-1].start()

    @staticmethod
    def test_of(starter):
        try:
            with open(f"/proc/{starter}/environ", "rb") as environ:
                for entry in environ.read().split(b"\0"):
                    if entry.startswith(b"OOMLAB_SUITE_TEST="):
                        return int(entry.split(b"=", 1)[1])
        except OSError:
            pass
        return None

    def follow(self, log_path):
        ran = re.compile(r"ran \S* of pid (\d+) as pid (\d+)")
        ended = re.compile(r"ended pid (\d+) after ([\d.]+) s of user time and ([\d.]+)")
        with open(log_path, errors="replace") as log:
            while True:
                line = log.readline()
                if not line:
                    if self.stopping:
                        return
                    time.sleep(0.005)
                    continue
                if match := ran.match(line):
                    self.test_of_copy[log_path, match[2]] = self.test_of(match[1])
                elif match := ended.match(line):
                    cpu = float(match[2]) + float(match[3])
                    test = self.test_of_copy.pop((log_path, match[1]), None)
                    if test is None:
                        self.unattributed += cpu
                    else:
                        self.cpu_of_test[test] = self.cpu_of_test.get(test, 0.0) + cpu

    def stop(self):
        for process in self.processes:
            process.terminate()
            process.wait()
        self.stopping = True
        for thread in self.threads:
            thread.join()


def default_signals():
    for number in (signal.SIGINT, signal.SIGQUIT):
        signal.signal(number, signal.SIG_DFL)


def run_one(test):
    environment = dict(os.environ)
    for entry in test["environment"]:
        key, _, value = entry.partition("=")
        environment[key] = value
    environment["OOMLAB_SUITE_TEST"] = str(test["number"])
    started = time.monotonic()
    # Every signal's disposition at its default, as CTest starts a test: a script started in
    # the background of a shell has SIGINT ignored, which a test that stops a run with it
    # would wait on for ever.
    output = tempfile.TemporaryFile()
    process = subprocess.Popen(test["command"], cwd=test["folder"], env=environment,
                               stdout=output, stderr=subprocess.STDOUT,
                               stdin=subprocess.DEVNULL, preexec_fn=default_signals)
    _, status, usage = os.wait4(process.pid, 0)
    # Waited for here, not by Popen: told so, it does not wait again.
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode not in (0, 77):  # a failure's output, kept for reading
        output.seek(0)
        name = re.sub(r"[^\w.-]", "_", test["name"])
        with open(os.path.join(tempfile.gettempdir(), f"failed-{name}.log"), "wb") as kept:
            kept.write(output.read())
    output.close()
    return (test["name"], usage.ru_utime, usage.ru_stime, time.monotonic() - started,
            process.returncode, test["number"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("-R", dest="pattern", default="")
    parser.add_argument("--engine-server", action="store_true")
    options = parser.parse_args()
    build_dir = os.path.abspath(options.build_dir)
    if not os.path.isfile(os.path.join(build_dir, "CTestTestfile.cmake")):
        sys.exit(f"{build_dir}: not a configured build folder; build first, or give --build-dir")
    tests = listed_tests(build_dir, options.pattern)
    # What the default test preset (CMakePresets.json) gives every test.
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    for number, test in enumerate(tests):
        test["number"] = number
    server = EngineServers(build_dir) if options.engine_server else None
    if server:
        os.environ["OOMLAB_ENGINE_SERVER"] = server.folder
    started = time.monotonic()
    # What other tests copy (CTest's fixture setups) first, as ctest runs them.
    results = [run_one(test) for test in tests if test["setup"]]
    with concurrent.futures.ThreadPoolExecutor(options.jobs) as pool:
        results += pool.map(run_one, [test for test in tests if not test["setup"]])
    wall = time.monotonic() - started
    copies = 0.0
    if server:
        server.stop()
        # A copy's CPU is the test's: counted as system time, the part it mostly is not, so
        # that user time stays what the tests' own processes took.
        results = [(name, user, system + server.cpu_of_test.get(number, 0.0), elapsed, code,
                    number) for name, user, system, elapsed, code, number in results]
        copies = sum(server.cpu_of_test.values())
    results.sort(key=lambda r: -(r[1] + r[2]))
    total = sum(r[1] + r[2] for r in results)
    failed = [r[0] for r in results if r[4] not in (0, 77)]
    print(f"{len(results)} tests, {total:.1f} s of CPU ({sum(r[1] for r in results):.1f} user,"
          f" {sum(r[2] for r in results):.1f} system), {wall:.1f} s wall at {options.jobs} at"
          f" a time; {len(failed)} failed {' '.join(failed)}"
          f"{' (output: ' + tempfile.gettempdir() + '/failed-NAME.log)' if failed else ''}")
    if server:
        print(f"of which the engine server's copies {copies:.1f} s; copies whose test was not"
              f" seen: {server.unattributed:.1f} s (not in the totals)")
    print()
    print(f"{'CPU s':>7} {'wall s':>7}  test")
    for name, user, system, elapsed, *_ in results[:options.top]:
        print(f"{user + system:7.1f} {elapsed:7.1f}  {name}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
