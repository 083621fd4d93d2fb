#!/usr/bin/env python3
"""Prints the bad-input corpus as a Markdown table with what oomlab-cli actually answers.
    tests/data/bad/make_table.py [path/to/oomlab-cli]"""
import json
import os
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(os.path.dirname(here)))
cli = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build", "app", "oomlab-cli")
cases = json.load(open(os.path.join(here, "cases.json")))["cases"]
DEEP = 20000
# The same files tests/cli/bad_input_test.cpp writes.
GENERATORS = {
    "ten_megabyte_line": lambda: b"the 0.1 0.2 0.3\nof 0.4 0.5 0.6\nand 0.7 0.8 0.9\nto"
    + b" 0.123456" * 1_300_000 + b"\n",
    "deep_object": lambda: b'{"train": ' * DEEP + b"1" + b"}" * DEEP,
    "deep_array": lambda: b'{"train": ' + b"[" * DEEP + b"]" * DEEP + b"}",
    "deep_jsonl": lambda: b'{"text": "a", "label": 1}\n{"text": "b", "label": 2}\n{"text": '
    + b"[" * DEEP + b"]" * DEEP + b"}\n",
    "utf16_glove": lambda: b"\xff\xfe" + "the 0.1 0.2\nof 0.3 0.4\n".encode("utf-16-le"),
}
print("| input | command | exit | message (abridged) |")
print("|---|---|---:|---|")
with tempfile.TemporaryDirectory() as scratch:
    for case in cases:
        file = os.path.join(here, case["file"]) if case["file"] else ""
        if "generated" in case:
            file = os.path.join(scratch, os.path.basename(case["file"]))
            with open(file, "wb") as out:
                out.write(GENERATORS[case["generated"]]())
        args = [a.replace("{file}", file).replace("{latin1}", "\udce9") for a in case["args"]]
        if args[0] in ("run", "sweep") and not case.get("no_db"):
            args += ["--db", os.path.join(scratch, "runs.sqlite")]
        result = subprocess.run([cli] + args, capture_output=True, text=True, timeout=300)
        lines = [line for line in result.stderr.strip().splitlines()
                 if line != "Run with --help for more information."]
        message = lines[-1] if lines else "(run completed)"
        message = message.replace(here + "/", "").replace(scratch + "/", "").replace("error: ", "")
        if len(message) > 150:
            message = message[:147] + "..."
        shown = " ".join(a.replace(file, case["file"] or "") for a in case["args"])
        name = case["file"] or "(none)"
        if "generated" in case:
            name += " (generated)"
        print(f"| `{name}` | `{shown}` | {result.returncode} | {message.replace('|', '/')} |")
