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
print("| input | command | exit | message (abridged) |")
print("|---|---|---:|---|")
with tempfile.TemporaryDirectory() as scratch:
    for case in cases:
        file = os.path.join(here, case["file"]) if case["file"] else ""
        if "generated" in case:
            file = os.path.join(scratch, os.path.basename(case["file"]))
            with open(file, "w") as out:
                out.write("the 0.1 0.2 0.3\nof 0.4 0.5 0.6\nand 0.7 0.8 0.9\nto")
                out.write(" 0.123456" * 1_300_000 + "\n")
        args = [a.replace("{file}", file) for a in case["args"]]
        if args[0] == "run":
            args += ["--db", os.path.join(scratch, "runs.sqlite")]
        result = subprocess.run([cli] + args, capture_output=True, text=True, timeout=300)
        message = result.stderr.strip().splitlines()[-1] if result.stderr.strip() else "(run completed)"
        message = message.replace(here + "/", "").replace(scratch + "/", "").replace("error: ", "")
        if len(message) > 150:
            message = message[:147] + "..."
        shown = " ".join(a.replace(file, case["file"] or "") for a in case["args"])
        name = case["file"] or "(none)"
        if "generated" in case:
            name += " (generated)"
        print(f"| `{name}` | `{shown}` | {result.returncode} | {message.replace('|', '/')} |")
