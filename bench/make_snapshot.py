"""Writes a CUDA memory snapshot of a given shape and size, as PyTorch's pickler writes one,
for the snapshot benchmarks.

    make_snapshot.py SHAPE EVENTS OUT.pickle

SHAPE is "deep" (each event a 12-frame stack of its own: fresh dicts and strings, as a long
recording that stores its frames per event writes them; about 1 KB an event) or "shared" (each
allocation names one of 40 stacks, shared as PyTorch's pickles share them; frees carry no
frames; about 50 bytes an event). Allocations are alive at the end as one segment's blocks
("shared") or a segment each ("deep").
"""
import argparse
import pickle
import random
import sys

FILES = ["/usr/lib/python3/site-packages/torch/nn/modules/linear.py",
         "/usr/lib/python3/site-packages/torch/nn/modules/module.py",
         "/home/user/project/model.py", "/home/user/project/train.py"]
SHARED = [[{"name": f"fn{i}_{d}", "filename": ("/site-packages/torch/nn/modules/linear.py"
            if d < 4 else f"/home/user/train_{i}.py"), "line": 10 + d} for d in range(12)]
          for i in range(40)]


def deep_frames(stack):  # new objects each time: the pickler cannot share them
    return [{"name": "".join(["at::native::forward(at::Tensor const&, long) #", str(stack), "_",
                              str(d)]),
             "filename": "".join([FILES[(stack + d) % 4], ""]), "line": 10 + d}
            for d in range(12)]


def take_random(items):
    """Removes and returns an element chosen uniformly at random, in O(1): list.pop(i) shifts
    every element after i, which made long traces quadratic. The last element takes the chosen
    one's place; the order of the live allocations matters nowhere."""
    i = random.randrange(len(items))
    items[i], items[-1] = items[-1], items[i]
    return items.pop()


def trace_of(shape, count):
    random.seed(7)
    trace, alive, addr = [], [], 1 << 32
    while len(trace) < count:
        if alive and random.random() < 0.45:
            a, s = take_random(alive)
            frames = deep_frames(random.randrange(40)) if shape == "deep" else []
            trace.append({"action": "free_requested", "addr": a, "size": s, "stream": 0,
                          "frames": frames})
            trace.append({"action": "free_completed", "addr": a, "size": s, "stream": 0,
                          "frames": []})
        else:
            s = random.choice([512, 4096, 1 << 20, 4 << 20])
            frames = (deep_frames(random.randrange(40)) if shape == "deep"
                      else random.choice(SHARED))
            trace.append({"action": "alloc", "addr": addr, "size": s, "stream": 0,
                          "time_us": len(trace), "frames": frames})
            alive.append((addr, s))
            addr += s
    return trace[:count]


def segments_of(shape, trace):
    live = {}
    for e in trace:
        if e["action"] == "alloc":
            live[e["addr"]] = e["size"]
        elif e["action"] == "free_completed":
            live.pop(e["addr"], None)
    blocks = [{"address": a, "size": s, "requested_size": s, "state": "active_allocated",
               "frames": []} for a, s in live.items()]
    if shape == "deep":
        return [{"device": 0, "address": b["address"], "total_size": b["size"],
                 "allocated_size": b["size"], "stream": 0, "segment_type": "large",
                 "frames": [], "blocks": [b]} for b in blocks]
    total = sum(live.values())
    return [{"device": 0, "address": 1 << 32, "total_size": total, "allocated_size": total,
             "segment_type": "large", "frames": [], "blocks": blocks}]


def event_count(text):  # argparse shows the error below its usage line
    try:
        count = int(text)
        if count >= 0:
            return count
    except ValueError:
        pass
    raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of events")


def main():
    summary, _usage, shapes = __doc__.split("\n\n", 2)  # argparse writes its own usage line
    parser = argparse.ArgumentParser(prog="make_snapshot.py", description=summary, epilog=shapes,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("shape", metavar="SHAPE", choices=("deep", "shared"),
                        help="deep or shared (below)")
    parser.add_argument("count", metavar="EVENTS", type=event_count,
                        help="number of trace events to write")
    parser.add_argument("path", metavar="OUT.pickle", help="file to write")
    args = parser.parse_args()
    trace = trace_of(args.shape, args.count)
    try:
        with open(args.path, "wb") as out:
            pickle.dump({"segments": segments_of(args.shape, trace), "device_traces": [trace]},
                        out, protocol=4)
    except OSError as error:
        sys.exit(f"make_snapshot.py: {args.path}: {error.strerror}")


if __name__ == "__main__":
    main()
