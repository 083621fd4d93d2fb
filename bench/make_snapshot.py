"""Writes a CUDA memory snapshot of a given shape and size, as PyTorch's pickler writes one,
for the snapshot benchmarks.

    make_snapshot.py SHAPE EVENTS OUT.pickle

SHAPE is "deep" (each event a 12-frame stack of its own: fresh dicts and strings, as a long
recording that stores its frames per event writes them; about 1 KB an event), "real" (as
PyTorch 2.x writes a recording of C++ and Python stacks: each event its own list of 150 to 450
frames, one of 2,000 call paths a training loop repeats; the frames themselves 5,000 dicts
shared by every list, so the pickle refers to them by their memo numbers; a free's completion
shares its request's list; about 1.1 KB an event) or
"shared" (each allocation names one of 40 stacks, shared as PyTorch's pickles share them; frees
carry no frames; about 50 bytes an event). Allocations are alive at the end as one segment's
blocks ("shared") or a segment each ("deep", "real").
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


# "real": the unique frames of a deep program, C++ and Python, each dict made once as PyTorch's
# symbolizer makes it; a call path is a run of consecutive frames of the pool.
REAL_FRAMES = [{"name": (f"at::native::op_{i}(at::Tensor const&, c10::ArrayRef<long>)" if i % 3
                         else f"forward_{i}"),
                "filename": ("??" if i % 3 else f"/home/user/project/models/layer_{i % 97}.py"),
                "line": 0 if i % 3 else i % 800} for i in range(5000)]


REAL_PATHS = [(start, random.Random(start).randrange(150, 451))
              for start in random.Random(1).sample(range(len(REAL_FRAMES) - 450), 2000)]


def real_frames():
    start, depth = random.choice(REAL_PATHS)
    return REAL_FRAMES[start:start + depth]  # a new list of the shared dicts


def frames_of(shape, alloc):
    if shape == "deep":
        return deep_frames(random.randrange(40))
    if shape == "real":
        return real_frames()
    return random.choice(SHARED) if alloc else []


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
            frames = frames_of(shape, alloc=False)
            trace.append({"action": "free_requested", "addr": a, "size": s, "stream": 0,
                          "frames": frames})
            trace.append({"action": "free_completed", "addr": a, "size": s, "stream": 0,
                          "frames": frames if shape == "real" else []})
        else:
            s = random.choice([512, 4096, 1 << 20, 4 << 20])
            frames = frames_of(shape, alloc=True)
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
    if shape != "shared":
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
    parser.add_argument("shape", metavar="SHAPE", choices=("deep", "real", "shared"),
                        help="deep, real or shared (below)")
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
