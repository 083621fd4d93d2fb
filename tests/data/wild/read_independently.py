#!/usr/bin/env python3
"""The figures of a memory snapshot or a profiler trace, read with plain Python alone (pickle,
json, gzip), as a check on OOM Lab's own readers: one JSON object on standard output.

A snapshot (any pickle): per device, its segments, what they reserve and what their blocks hold
allocated, cached free ("inactive") and freed but waiting on another stream
("active_pending_free") at the end, the trace's events, the most allocated over the trace (the end state less
the trace's net change, or, where the trace opens every segment, nothing but what keeps each
moment at or above zero; then each allocation and free in turn), and whether any allocation
carries a Python frame (a line the report can name).

A profiler trace (JSON, gzipped or not): per device of its "[memory]" events, their count and
the most allocated ("Total Allocated" where the events give it, else the running sum of
"Bytes" from the lowest start that keeps it from going below zero), and at the end what was
allocated and reserved and the difference, cached free (reserved: null where the events give no
"Total Reserved"; the CPU's allocator reserves nothing).

export_memory_timeline's rows (a JSON list of [time, action, bytes, category]): the running
sum of their signed bytes, its most and its end, as device 0's.

A tar archive (traces packed together): the names of its files, and no device.

A web page torch.cuda._memory_viz wrote (trace_plot, segment_plot): the snapshot it carries as
base64 in the list its script hands to MemoryViz.js, read as that pickle.
"""
import base64
from itertools import accumulate
import gzip
import io
import json
import pickle
import re
import sys
import tarfile


def python_frame(frames):
    return any(str(frame.get("filename", "")).endswith(".py") for frame in frames or [])


def block_frames(block):
    if block.get("frames"):
        return block["frames"]
    history = block.get("history") or []
    return history[-1].get("frames") if history else None


def read_snapshot(data):
    segments = data if isinstance(data, list) else data.get("segments") or []
    traces = [] if isinstance(data, list) else data.get("device_traces") or []
    devices = {}

    def device(index):
        return devices.setdefault(index, {"segments": 0, "reserved": 0, "allocated": 0,
                                          "cached_free": 0, "pending_free": 0, "events": 0,
                                          "peak_allocated": 0, "lines": False})

    for segment in segments:
        d = device(segment["device"])
        d["segments"] += 1
        d["reserved"] += segment["total_size"]
        for block in segment["blocks"]:
            if block["state"] == "active_allocated":
                d["allocated"] += block["size"]
                d["lines"] = d["lines"] or python_frame(block_frames(block))
            elif block["state"] == "inactive":
                d["cached_free"] += block["size"]
            elif block["state"] == "active_pending_free":
                d["pending_free"] += block["size"]
    for index, trace in enumerate(traces):
        if not trace and index not in devices:
            continue
        d = device(index)
        d["events"] = len(trace)
        moves = []
        segment_moves = []
        for event in trace:
            if event["action"] == "alloc":
                moves.append(event["size"])
                d["lines"] = d["lines"] or python_frame(event.get("frames"))
            elif event["action"] == "free_completed":
                moves.append(-event["size"])
            elif event["action"] in ("segment_alloc", "segment_map"):
                segment_moves.append(event["size"])
            elif event["action"] in ("segment_free", "segment_unmap"):
                segment_moves.append(-event["size"])
        allocated = d["allocated"] - sum(moves)
        if isinstance(data, dict) and "segments" not in data:
            # A device's trace saved alone, no dump: each figure from the least that keeps every
            # moment at or above zero, and its end the trace's own.
            allocated = -min([0] + list(accumulate(moves)))
            d["allocated"] = allocated + sum(moves)
            d["reserved"] = -min([0] + list(accumulate(segment_moves))) + sum(segment_moves)
            d["cached_free"] = max(d["reserved"] - d["allocated"], 0)
        # Every segment opened inside the trace: nothing was allocated before it (the blocks'
        # surplus over the trace's sizes is their rounding), and no moment is below zero.
        if segment_moves and d["reserved"] - sum(segment_moves) == 0:
            running, lowest = 0, 0
            for move in moves:
                running += move
                lowest = min(lowest, running)
            allocated = -lowest
        peak = allocated
        for move in moves:
            allocated += move
            peak = max(peak, allocated)
        d["peak_allocated"] = peak
    for d in devices.values():
        if d["events"] == 0:
            d["peak_allocated"] = d["allocated"]
    return {"kind": "snapshot", "devices": {str(k): v for k, v in sorted(devices.items())}}


def read_trace(data):
    events = data if isinstance(data, list) else data.get("traceEvents") or []
    devices = {}
    for event in events:
        if not isinstance(event, dict) or event.get("name") != "[memory]":
            continue
        args = event.get("args") or {}
        key = str(args.get("Device Id", -1))
        devices.setdefault(key, []).append(dict(args, _ts=float(event.get("ts", 0))))
    figures = {}
    for key, memory in devices.items():
        memory.sort(key=lambda args: args["_ts"])
        if all("Total Allocated" in args for args in memory):
            peak = max(args["Total Allocated"] for args in memory)
            allocated = memory[-1]["Total Allocated"]
        else:
            running, lowest, highest = 0, 0, 0
            for args in memory:
                running += args.get("Bytes", 0)
                lowest, highest = min(lowest, running), max(highest, running)
            peak, allocated = highest - lowest, running - lowest
        reserved = None
        if key == "-1":
            reserved = 0
        elif all("Total Reserved" in args for args in memory):
            reserved = memory[-1]["Total Reserved"]
        figures[key] = {"events": len(memory), "peak_allocated": peak, "allocated": allocated,
                        "reserved": reserved,
                        "cached_free": None if reserved is None else max(reserved - allocated, 0)}
    return {"kind": "trace", "devices": figures}


def read_timeline_rows(rows):
    # export_memory_timeline's rows, [time, action, bytes, category]: the bytes are signed (a
    # tensor freed, or a version's category ended, is negative), so their running sum is what
    # was allocated; the device is not named (device 0).
    running, peak = 0, 0
    for row in rows:
        running += row[2]
        peak = max(peak, running)
    return {"kind": "timeline_rows",
            "devices": {"0": {"peak_allocated": peak, "allocated": running}}}


def main(path):
    with open(path, "rb") as file:
        raw = file.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    page = re.search(rb'"base64":\s*"([A-Za-z0-9+/=]+)"', raw) if raw.lstrip()[:1] == b"<" else None
    if page:  # memory_viz's page: the pickle it carries
        raw = base64.b64decode(page.group(1))
    if raw[257:262] == b"ustar":  # a tar archive: its files, none read as memory
        with tarfile.open(fileobj=io.BytesIO(raw)) as archive:
            members = [m.name for m in archive.getmembers() if m.isfile()]
        result = {"kind": "archive", "members": members, "devices": {}}
    elif raw[:1] == b"\x80":
        result = read_snapshot(pickle.loads(raw))
    else:
        data = json.loads(raw.decode("utf-8-sig"))
        rows = isinstance(data, list) and data and all(isinstance(row, list) for row in data)
        alone = isinstance(data, list) and data and all(
            isinstance(event, dict) and "action" in event for event in data)
        result = (read_timeline_rows(data) if rows
                  else read_snapshot({"device_traces": [data]}) if alone else read_trace(data))
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
