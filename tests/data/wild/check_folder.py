#!/usr/bin/env python3
"""Reads every snapshot and profiler trace in a folder with `oomlab-cli snapshot show --json`
and with read_independently.py (plain Python), and says, file by file, whether their figures
agree: the check for files that cannot be kept in the repository (no licence, too large).
Exits 1 when any file is refused though Python finds memory in it, or any figure differs.

    check_folder.py OOMLAB_CLI FOLDER
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FIGURES = [("segments", "segments"), ("reserved", "reserved_bytes"),
           ("allocated", "allocated_bytes"), ("cached_free", "cached_free_bytes"),
           ("pending_free", "pending_free_bytes"), ("events", "events"),
           ("peak_allocated", "peak_allocated_bytes")]


def independent(path):
    out = subprocess.run([sys.executable, os.path.join(HERE, "read_independently.py"), path],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)["devices"]


def differences(cli, path):
    try:
        python = independent(path)
    except subprocess.CalledProcessError as error:  # not JSON or pickle Python can parse
        shown = subprocess.run([cli, "snapshot", "show", "--json", path], capture_output=True,
                               text=True)
        why = (error.stderr or "").strip().splitlines()[-1:] or ["unreadable"]
        if shown.returncode != 0:
            return [], "neither reads it (Python: " + why[0][-60:] + ")"
        return ["read, though Python cannot: " + why[0][-80:]], "read"
    shown = subprocess.run([cli, "snapshot", "show", "--json", path], capture_output=True,
                           text=True)
    if shown.returncode != 0:
        refused = shown.stderr.strip().splitlines()[-1] if shown.stderr.strip() else "refused"
        return ([] if not python else [refused]), "refused: " + refused[-80:]
    found = []
    devices = json.loads(shown.stdout)["devices"]
    if len(devices) != len(python):
        found.append(f"{len(devices)} devices, Python {len(python)}")
    for device in devices:
        figures = python.get(str(device["device"]))
        if figures is None:
            found.append(f"device {device['device']} not in Python's reading")
            continue
        for key, shown_key in FIGURES:
            if key in figures and figures[key] != device[shown_key]:
                found.append(f"device {device['device']} {key}: {device[shown_key]} against "
                             f"Python's {figures[key]}")
    return found, f"{len(devices)} devices"


def main(cli, folder):
    failed = 0
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if not os.path.isfile(path) or name.endswith((".tsv", ".md", ".py")):
            continue
        found, summary = differences(cli, path)
        failed += bool(found)
        print(f"{'DIFFERS' if found else 'agrees '}  {name}: {'; '.join(found) or summary}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
