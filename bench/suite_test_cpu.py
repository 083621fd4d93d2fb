#!/usr/bin/env python3
"""The CPU time of each test of the suite: every test ctest lists (`--show-only=json-v1`) runs
with its own command, folder and environment, JOBS at a time (the fixtures' setups first), and
its CPU is read with wait4: the test's process and every process it waited for (a server it
started and killed without waiting is not counted). Prints the costliest tests and the totals.
bench/suite_cpu.sh sums the same suite's CPU by program instead.

    bench/suite_test_cpu.py [--build-dir build] [--jobs 2] [--top 40] [-R REGEX]
"""

import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
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


def run_one(test):
    environment = dict(os.environ)
    for entry in test["environment"]:
        key, _, value = entry.partition("=")
        environment[key] = value
    started = time.monotonic()
    process = subprocess.Popen(test["command"], cwd=test["folder"], env=environment,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               stdin=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    # Waited for here, not by Popen: told so, it does not wait again.
    process.returncode = os.waitstatus_to_exitcode(status)
    return (test["name"], usage.ru_utime, usage.ru_stime, time.monotonic() - started,
            process.returncode)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("-R", dest="pattern", default="")
    options = parser.parse_args()
    build_dir = os.path.abspath(options.build_dir)
    if not os.path.isfile(os.path.join(build_dir, "CTestTestfile.cmake")):
        sys.exit(f"{build_dir}: not a configured build folder; build first, or give --build-dir")
    tests = listed_tests(build_dir, options.pattern)
    started = time.monotonic()
    # What other tests copy (CTest's fixture setups) first, as ctest runs them.
    results = [run_one(test) for test in tests if test["setup"]]
    with concurrent.futures.ThreadPoolExecutor(options.jobs) as pool:
        results += pool.map(run_one, [test for test in tests if not test["setup"]])
    wall = time.monotonic() - started
    results.sort(key=lambda r: -(r[1] + r[2]))
    total = sum(r[1] + r[2] for r in results)
    failed = [r[0] for r in results if r[4] not in (0, 77)]
    print(f"{len(results)} tests, {total:.1f} s of CPU ({sum(r[1] for r in results):.1f} user,"
          f" {sum(r[2] for r in results):.1f} system), {wall:.1f} s wall at {options.jobs} at"
          f" a time; {len(failed)} failed {' '.join(failed)}\n")
    print(f"{'CPU s':>7} {'wall s':>7}  test")
    for name, user, system, elapsed, _ in results[:options.top]:
        print(f"{user + system:7.1f} {elapsed:7.1f}  {name}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
