"""The snapshots record_corpus.py recorded on a GPU, each read three ways: by PyTorch's own viewer
(torch.cuda._memory_viz: its segment summary's reserved and allocated memory and its count of
segments), by `oomlab-cli snapshot show` (the end state, and the peaks of the trace), and by
`oomlab-cli snapshot whatif` (the trace replayed through the caching allocator's model under
the recorded settings) against what the allocator itself reported over the recorded stretch
(torch.cuda.max_memory_reserved / max_memory_allocated, in NAME.json). Runs anywhere PyTorch
is installed; needs no GPU.

    corpus_report.py CLI DIR [--out REPORT.md] [--tolerance 0.02]

Reads every NAME.pickle or NAME.pickle.gz in DIR that has its NAME.json beside it.
"""
import argparse
import gzip
import json
import pathlib
import pickle
import subprocess
import sys

from torch.cuda import _memory_viz

MIB = 2**20


def memory_viz_reading(snapshot):
    """What _memory_viz.segsum adds up, with its own helpers: every segment's size, and each
    active block's requested size."""
    segments = snapshot["segments"]
    reserved = sum(segment["total_size"] for segment in segments)
    allocated = sum(_memory_viz._block_extra(block)[1] for segment in segments
                    for block in segment["blocks"] if block["state"] == "active_allocated")
    _memory_viz.segsum(snapshot)  # its own consistency checks (it raises where they fail)
    return {"segments": len(segments), "reserved": reserved, "allocated": allocated}


def cli_json(cli, *arguments):
    return json.loads(subprocess.run([cli, "snapshot", *arguments, "--json"], check=True,
                                     capture_output=True, text=True).stdout)


def error(ours, theirs):
    return 0.0 if ours == theirs else (ours / theirs - 1 if theirs else float("inf"))


def read(cli, pickle_path):
    name = pickle_path.name.split(".pickle")[0]
    recorded = json.loads(pickle_path.with_name(name + ".json").read_text())
    opener = gzip.open if pickle_path.suffix == ".gz" else open
    with opener(pickle_path, "rb") as stream:
        viz = memory_viz_reading(pickle.load(stream))
    shown = next(d for d in cli_json(cli, "show", str(pickle_path))["devices"] if d["device"] == 0)
    whatif = next(d for d in cli_json(cli, "whatif", str(pickle_path))["devices"]
                  if d["device"] == 0)
    row = {"name": name, "viz": viz, "recorded": {
        key: recorded.get(key) for key in ("max_memory_reserved", "max_memory_allocated",
                                           "memory_reserved", "memory_allocated")},
        "shown": {key: shown[key] for key in ("segments", "reserved_bytes", "allocated_bytes",
                                              "peak_reserved_bytes", "peak_allocated_bytes",
                                              "events", "trace_problems")},
        "replayed_peak_reserved": whatif["replayed"]["peak_reserved"],
        "fidelity": whatif["fidelity"], "notes": whatif.get("notes", [])}
    row["errors"] = {
        "segments": error(shown["segments"], viz["segments"]),
        "reserved": error(shown["reserved_bytes"], viz["reserved"]),
        "allocated": error(shown["allocated_bytes"], viz["allocated"]),
        "peak_reserved": error(shown["peak_reserved_bytes"], recorded["max_memory_reserved"]),
        "replayed_peak_reserved": error(whatif["replayed"]["peak_reserved"],
                                        recorded["max_memory_reserved"]),
    }
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cli")
    parser.add_argument("folder", type=pathlib.Path)
    parser.add_argument("--out", type=pathlib.Path)
    parser.add_argument("--tolerance", type=float, default=0.02)
    args = parser.parse_args()
    rows = [read(args.cli, path) for path in sorted(args.folder.glob("*.pickle*"))
            if path.with_name(path.name.split(".pickle")[0] + ".json").exists()]
    lines = ["| snapshot | segments (viz / ours) | reserved MiB (viz / ours) | allocated MiB "
             "(viz / ours) | most reserved MiB (allocator / trace / replay) | blocks agreed |",
             "|---|---:|---:|---:|---:|---:|"]
    failed = 0
    for row in rows:
        viz, shown, recorded, fidelity = row["viz"], row["shown"], row["recorded"], row["fidelity"]
        outside = [key for key, value in row["errors"].items() if abs(value) > args.tolerance]
        failed += bool(outside)
        lines.append(
            f"| {row['name']} | {viz['segments']} / {shown['segments']} | "
            f"{viz['reserved'] / MIB:.1f} / {shown['reserved_bytes'] / MIB:.1f} | "
            f"{viz['allocated'] / MIB:.1f} / {shown['allocated_bytes'] / MIB:.1f} | "
            f"{recorded['max_memory_reserved'] / MIB:.1f} / {shown['peak_reserved_bytes'] / MIB:.1f}"
            f" ({row['errors']['peak_reserved']:+.1%}) / {row['replayed_peak_reserved'] / MIB:.1f}"
            f" ({row['errors']['replayed_peak_reserved']:+.1%}) | "
            f"{fidelity['blocks_agreed']} of {fidelity['allocations']}"
            + (f" | outside {args.tolerance:.0%}: {', '.join(outside)}" if outside else " |"))
    table = "\n".join(lines)
    print(table)
    print(f"{len(rows) - failed} of {len(rows)} within {args.tolerance:.0%} on every figure")
    if args.out:
        args.out.write_text(table + "\n")
        args.out.with_suffix(".json").write_text(json.dumps(rows, indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
