#!/usr/bin/env python3
"""CTest's slots are half cores (tests/CMakeLists.txt): every test of the build takes two, except
the tests named as mostly waiting, which take one. Fails naming a test named as waiting that
CTest does not have (renamed, or a typo: CTest ignores properties set on a test it lacks), and a
test that takes one slot without being named (a test added without OOMLAB_TEST_CORE).

    test_slots_test.py CTEST BUILD_DIR WAITING_TEST...
"""

import json
import subprocess
import sys


def main():
    ctest, build_dir, *waiting = sys.argv[1:]
    shown = subprocess.run([ctest, "--test-dir", build_dir, "--show-only=json-v1"],
                           capture_output=True, text=True, check=True)
    slots = {}
    for test in json.loads(shown.stdout)["tests"]:
        properties = {p["name"]: p["value"] for p in test.get("properties", [])}
        slots[test["name"]] = int(properties.get("PROCESSORS", 1))
    failures = [f"{name}: named as waiting, but CTest has no such test" for name in waiting
                if name not in slots]
    failures += [f"{name}: named as waiting, but takes {slots[name]} slots" for name in waiting
                 if slots.get(name, 1) != 1]
    failures += [f"{name}: takes one slot, a waiting test's, without being named as waiting "
                 "(give it ${OOMLAB_TEST_CORE}, or name it in oomlab_tests_wait)"
                 for name, count in sorted(slots.items()) if count < 2 and name not in waiting]
    print(f"{len(slots)} tests, {len(waiting)} of them waiting")
    for failure in failures:
        print(failure, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
