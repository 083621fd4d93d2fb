#!/usr/bin/env python3
"""Snapshots in the layouts real programs wrote that no file kept in tests/data/wild shows
(their programs' licences let us keep none of them): each layout rebuilt field by field, with
figures of our own, for the reader's tests; no GPU or torch needed.

    make_wild_layouts.py OUT.pickle LAYOUT

LAYOUT is one of:
  huge-line     a trace whose frames carry a line of 2**64-1, as torch.compile's generated code
                leaves in a snapshot's frames (and a negative max_split_size, as every
                allocator_settings has)
  bare-list     the bare list of segments torch.cuda.memory_snapshot() returns, on device 1
  late-history  blocks alive at the end carry their frames, the trace (begun late) none of
                their allocations: the lines of what was alive come from the blocks
  many-devices  segments on devices 0 and 2, and four device traces of which two are empty
  newer-fields  the fields PyTorch 2.12 to 2.15 add, as torch.cuda.memory._snapshot's
                documentation (2.15) describes them: a "pool_id" pair on each trace entry, an
                "annotate" entry (after the fact, on a live allocation), user_metadata set from
                a dict (compact JSON), an entry's "internal_metadata" ("mallocWithAddress"), and
                pinned host memory in "host_segments"/"host_traces"
  pool-ids      entries naming their pool ("pool_id"): a private pool opened, used and released
                within the trace, beside the default pool's segment still held at the end
  host-trace-dict  a "host_traces" that is a dict, not a list of entries
  segments-only a trace of one entry, a segment freed, and no allocation: what was alive at the
                dump is all it shows
  no-history    segments alone, most of them cached free, and an empty device trace: a dump
                with the history off (voxelflex's), whose figures are those at the dump
  empty-devices no segment and four empty device traces, with the allocator's settings: what a
                process that saw 4 GPUs dumps before its first allocation, after empty_cache(),
                or as a rank that allocated nothing (history recorded or not)
  closure-forward  PyTorch Lightning's training step, whose forward runs inside the optimizer's
                step (optimizer.step(closure)): the activations' frames hold torch/optim/ beyond
                the model's forward; the trace ends in an out-of-memory
  math-attention   a training step whose scaled_dot_product_attention fell back to its math
                kernel (stacks="all": its C++ frames), which kept each head's weights for
                backward (FSDP runs of torchtitan's llama3, memory_viz pages kept no copy of)
  huge-line-json   huge-line saved as JSON (json.dump with indent=4, as people save a snapshot to
                read it in an editor): its line of 2**64-1 past a signed 64-bit number
  huge-line-page   huge-line inside the web page torch.cuda._memory_viz writes (trace_plot): the
                pickle as base64 in the list its script hands to MemoryViz.js
  timeline-picture the page the profiler's export_memory_timeline("x.html") writes: a title and
                a PNG, no events
  timeline-raw  what export_memory_timeline("x.raw.json") writes (tonghuikang's): a list of
                [time in ns, action, bytes, category] rows, -1 for what existed before profiling
"""
import base64
import json
import pickle
import sys

MiB = 1 << 20
BASE = 0x7F0000000000
HUGE_LINE = 2**64 - 1


def frames(line, name="forward", filename="train.py"):
    return [{"filename": "??", "line": 0, "name": "c10::cuda::CUDACachingAllocator::malloc"},
            {"filename": filename, "line": line, "name": name}]


def segment(device, address, blocks):
    total = sum(b["size"] for b in blocks)
    allocated = sum(b["size"] for b in blocks if b["state"] == "active_allocated")
    return {"device": device, "address": address, "total_size": total,
            "allocated_size": allocated, "active_size": allocated,
            "requested_size": allocated, "stream": 0, "segment_type": "large",
            "segment_pool_id": (0, 0), "is_expandable": False, "frames": [],
            "blocks": blocks}


def block(address, size, state="active_allocated", block_frames=None):
    return {"address": address, "size": size, "requested_size": size, "state": state,
            "frames": block_frames or []}


def event(action, address, size, event_frames=None, time=0):
    return {"action": action, "addr": address, "size": size, "stream": 0,
            "time_us": time, "frames": event_frames or []}


def huge_line():
    # Compiled code: the line of a frame in generated code is 2**64-1 (-1 as an unsigned).
    compiled = [{"filename": "/tmp/torchinductor_user/ab/cabc.py", "line": HUGE_LINE,
                 "name": "call"}] + frames(30)
    trace = [event("segment_alloc", BASE, 20 * MiB, compiled, 1),
             event("alloc", BASE, 8 * MiB, compiled, 2),
             event("alloc", BASE + 8 * MiB, 4 * MiB, frames(31), 3),
             event("free_requested", BASE + 8 * MiB, 4 * MiB, frames(31), 4),
             event("free_completed", BASE + 8 * MiB, 4 * MiB, frames(31), 5)]
    segments = [segment(0, BASE, [block(BASE, 8 * MiB, block_frames=compiled),
                                  block(BASE + 8 * MiB, 12 * MiB, "inactive")])]
    return {"segments": segments, "device_traces": [trace],
            "allocator_settings": {"max_split_size": -1, "expandable_segments": False}}


def bare_list():
    return [segment(1, BASE, [block(BASE, 6 * MiB, block_frames=frames(12, "load")),
                              block(BASE + 6 * MiB, 14 * MiB, "inactive")])]


def late_history():
    # The model (30 MiB) was built before the history began; its blocks carry their frames.
    model = [block(BASE, 10 * MiB, block_frames=frames(7, "__init__", "model.py")),
             block(BASE + 10 * MiB, 20 * MiB, block_frames=frames(8, "__init__", "model.py"))]
    activation = block(BASE + 30 * MiB, 2 * MiB, block_frames=frames(41))
    segments = [segment(0, BASE, model + [activation,
                                          block(BASE + 32 * MiB, 8 * MiB, "inactive")])]
    trace = [event("alloc", BASE + 30 * MiB, 2 * MiB, frames(41), 1)]
    return {"segments": segments, "device_traces": [trace]}


def closure_frames(line):
    # Innermost first: the model's forward, called by Lightning's closure inside Adam's step.
    torch = "/usr/lib/python3/dist-packages/torch/"
    lightning = "/usr/lib/python3/dist-packages/lightning/pytorch/loops/optimization/"
    return [{"filename": "??", "line": 0, "name": "c10::cuda::CUDACachingAllocator::malloc"},
            {"filename": "model.py", "line": line, "name": "forward"},
            {"filename": torch + "nn/modules/module.py", "line": 1747, "name": "_call_impl"},
            {"filename": lightning + "automatic.py", "line": 146, "name": "closure"},
            {"filename": torch + "optim/adam.py", "line": 210, "name": "step"},
            {"filename": torch + "optim/optimizer.py", "line": 487, "name": "wrapper"},
            {"filename": "train.py", "line": 60, "name": "main"}]


def closure_forward():
    weights = block(BASE, 10 * MiB, block_frames=frames(7, "__init__", "model.py"))
    first = block(BASE + 10 * MiB, 20 * MiB, block_frames=closure_frames(21))
    second = block(BASE + 30 * MiB, 20 * MiB, block_frames=closure_frames(22))
    segments = [segment(0, BASE, [weights, first, second,
                                  block(BASE + 50 * MiB, 4 * MiB, "inactive")])]
    # The step before's gradient, in autograd's engine, freed: a program that trains.
    grad = [{"filename": "??", "line": 0, "name": "torch::autograd::Engine::evaluate_function"}]
    trace = [event("alloc", BASE + 50 * MiB, 4 * MiB, grad, 0),
             event("free_requested", BASE + 50 * MiB, 4 * MiB, grad, 0),
             event("free_completed", BASE + 50 * MiB, 4 * MiB, grad, 0),
             event("alloc", first["address"], first["size"], closure_frames(21), 1),
             event("alloc", second["address"], second["size"], closure_frames(22), 2),
             dict(event("oom", 0, 64 * MiB, closure_frames(23), 3), device_free=2 * MiB)]
    return {"segments": segments, "device_traces": [trace]}


def math_attention():
    malloc = {"filename": "??", "line": 0, "name": "c10::cuda::CUDACachingAllocator::malloc"}
    torch = "/usr/lib/python3/dist-packages/torch/"
    math = [malloc, {"filename": "??", "line": 0, "name": "at::native::_softmax(at::Tensor const&, "
                                                          "long, bool)"},
            {"filename": "??", "line": 0,
             "name": "at::native::_scaled_dot_product_attention_math(at::Tensor const&, "
                     "at::Tensor const&, at::Tensor const&)"},
            {"filename": "attention.py", "line": 191, "name": "forward"},
            {"filename": torch + "nn/modules/module.py", "line": 1747, "name": "_call_impl"},
            {"filename": "train.py", "line": 60, "name": "main"}]
    backward = [malloc, {"filename": "??", "line": 0,
                         "name": "torch::autograd::Engine::evaluate_function"}]
    weights = block(BASE, 16 * MiB, block_frames=frames(7, "__init__", "model.py"))
    scores = [block(BASE + (16 + 64 * i) * MiB, 64 * MiB, block_frames=math) for i in range(4)]
    mlp = block(BASE + 272 * MiB, 32 * MiB, block_frames=frames(88))
    segments = [segment(0, BASE, [weights] + scores + [mlp, block(BASE + 304 * MiB, 8 * MiB,
                                                                 "inactive")])]
    trace = [event("alloc", b["address"], b["size"], math, i + 1) for i, b in enumerate(scores)]
    trace += [event("alloc", mlp["address"], mlp["size"], frames(88), 5),
              event("alloc", BASE + 304 * MiB, 8 * MiB, backward, 6),
              event("free_requested", BASE + 304 * MiB, 8 * MiB, backward, 7),
              event("free_completed", BASE + 304 * MiB, 8 * MiB, backward, 7)]
    return {"segments": segments, "device_traces": [trace]}


def segments_only():
    # A trace that kept one entry, a cached segment given back after the last allocation: the
    # model's blocks carry their frames, the trace allocates nothing.
    model = [block(BASE, 24 * MiB, block_frames=frames(37, "load_model", "evaluator.py"))]
    segments = [segment(0, BASE, model)]
    trace = [event("segment_free", BASE + 64 * MiB, 2 * MiB, frames(12, "empty_cache"), 1)]
    return {"segments": segments, "device_traces": [trace]}


def many_devices():
    segments = [segment(0, BASE, [block(BASE, 2 * MiB, block_frames=frames(5))]),
                segment(2, BASE + 64 * MiB,
                        [block(BASE + 64 * MiB, 4 * MiB, block_frames=frames(6))])]
    traces = [[event("alloc", BASE, 2 * MiB, frames(5), 1)], [],
              [event("alloc", BASE + 64 * MiB, 4 * MiB, frames(6), 1)], []]
    return {"segments": segments, "device_traces": traces}


def newer_fields():
    alloc = event("alloc", BASE, 8 * MiB, frames(41), 1)
    alloc.update(pool_id=(0, 0), user_metadata='{"step":3}')
    annotate = event("annotate", BASE, 0, frames(55, "pack_hook"), 2)
    annotate.update(pool_id=(0, 0), user_metadata='{"saved_for_backward":true}')
    prefix = event("alloc", BASE + 8 * MiB, 2 * MiB, frames(42), 3)
    prefix.update(pool_id=(0, 0), user_metadata="", internal_metadata="mallocWithAddress")
    segments = [segment(0, BASE, [block(BASE, 8 * MiB, block_frames=frames(41)),
                                  block(BASE + 8 * MiB, 2 * MiB, block_frames=frames(42)),
                                  block(BASE + 10 * MiB, 10 * MiB, "inactive")])]
    host_block = {"address": 0x600000, "size": 4 * MiB, "requested_size": 3 * MiB,
                  "state": "active_allocated", "frames": frames(12, "collate")}
    host_segments = [{"address": 0x600000, "total_size": 4 * MiB, "blocks": [host_block]}]
    host_traces = [event("alloc", 0x600000, 4 * MiB, frames(12, "collate"), 1)]
    return {"segments": segments, "device_traces": [[alloc, annotate, prefix]],
            "host_segments": host_segments, "host_traces": host_traces}


def pool_ids():
    # A private pool (a CUDA graph's, a MemPool's) opened, used and released within the trace,
    # beside the default pool's segment still held: only the entries' pool_id tell them apart.
    private = BASE + 64 * MiB
    pooled = [event("segment_alloc", private, 2 * MiB, [], 1),
              event("alloc", private, 1 * MiB, frames(21, "capture"), 2),
              event("free_requested", private, 1 * MiB, [], 3),
              event("free_completed", private, 1 * MiB, [], 4),
              event("segment_free", private, 2 * MiB, [], 5)]
    for entry in pooled:
        entry["pool_id"] = (1, 0)
    default = [event("segment_alloc", BASE, 2 * MiB, [], 6),
               event("alloc", BASE, 1 * MiB, frames(22), 7)]
    for entry in default:
        entry["pool_id"] = (0, 0)
    segments = [segment(0, BASE, [block(BASE, 1 * MiB, block_frames=frames(22)),
                                  block(BASE + MiB, MiB, "inactive")])]
    return {"segments": segments, "device_traces": [pooled + default]}


def no_history():
    first = [block(BASE, 8 * MiB), block(BASE + 8 * MiB, 12 * MiB, "inactive")]
    second = [block(BASE + 64 * MiB, 16 * MiB), block(BASE + 80 * MiB, 64 * MiB, "inactive")]
    settings = {"PYTORCH_CUDA_ALLOC_CONF": "", "max_split_size": -1,
                "garbage_collection_threshold": 0.0, "expandable_segments": False}
    return {"segments": [segment(0, BASE, first), segment(0, BASE + 64 * MiB, second)],
            "device_traces": [[]], "allocator_settings": settings, "external_annotations": []}


def empty_devices():
    divisions = {str(1 << i): 0 for i in range(16)}
    settings = {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True,max_split_size_mb:64",
                "max_split_size": 64 * MiB, "garbage_collection_threshold": 0.0,
                "expandable_segments": True, "roundup_power2_divisions": divisions}
    return {"segments": [], "device_traces": [[], [], [], []], "allocator_settings": settings,
            "external_annotations": []}


def host_trace_dict():
    return {"segments": [], "device_traces": [], "host_traces": {"alloc": 1}}


def helper_weights():
    # FlexGen's: every tensor made through one allocate() of the program's, the weights' frames
    # (init_weight_list, init_all_weights) above it; then a forward's activation.
    def weight_frames(line):
        return [{"filename": "??", "line": 0, "name": "c10::cuda::CUDACachingAllocator::malloc"},
                {"filename": "flexgen/pytorch_backend.py", "line": 195, "name": "allocate"},
                {"filename": "flexgen/flex_opt.py", "line": line, "name": "init_weight_list"},
                {"filename": "flexgen/flex_opt.py", "line": 170, "name": "init_all_weights"}]
    trace = [event("segment_alloc", BASE, 20 * MiB, weight_frames(143), 1),
             event("alloc", BASE, 6 * MiB, weight_frames(143), 2),
             event("alloc", BASE + 6 * MiB, 6 * MiB, weight_frames(144), 3),
             event("alloc", BASE + 12 * MiB, 2 * MiB,
                   [{"filename": "flexgen/pytorch_backend.py", "line": 195, "name": "allocate"},
                    {"filename": "flexgen/flex_opt.py", "line": 300, "name": "forward"}], 4)]
    blocks = [block(BASE, 6 * MiB, block_frames=weight_frames(143)),
              block(BASE + 6 * MiB, 6 * MiB, block_frames=weight_frames(144)),
              block(BASE + 12 * MiB, 2 * MiB), block(BASE + 14 * MiB, 6 * MiB, "inactive")]
    return {"segments": [segment(0, BASE, blocks)], "device_traces": [trace]}


LAYOUTS = {"huge-line": huge_line, "bare-list": bare_list, "late-history": late_history,
           "many-devices": many_devices, "segments-only": segments_only, "newer-fields": newer_fields,
           "pool-ids": pool_ids, "host-trace-dict": host_trace_dict, "empty-devices": empty_devices,
           "no-history": no_history, "closure-forward": closure_forward,
           "math-attention": math_attention,
           "helper-weights": helper_weights,
           "huge-line-json": huge_line,
           "huge-line-events-json": huge_line,
           "huge-line-page": huge_line}

def memory_viz_page(snapshot):
    data = base64.b64encode(pickle.dumps(snapshot, protocol=4)).decode()
    return ("<!DOCTYPE html>\n<html>\n<head>\n</head>\n<body>\n<script type=\"module\">\n"
            "import {add_local_files} from \"MemoryViz.js\"\n"
            f"const local_files = [{{\"name\": \"snapshot.pickle\", \"base64\": \"{data}\"}}]\n"
            "add_local_files(local_files, 'Active Memory Timeline')\n</script>\n</body>\n")


TIMELINE_PICTURE = ("<html>\n<head><meta charset=\"utf-8\" /><title>GPU Memory Timeline HTML"
                    "</title></head>\n<body>\n  <img src='data:image/png;base64,iVBORw0KGgo='>"
                    "\n</body>\n</html>\n")

# export_memory_timeline's rows, [time in ns, action, bytes, category]: actions 1 PREEXISTING,
# 2 CREATE, 3 INCREMENT_VERSION (the old version's category less, the new one's more), 4 DESTROY
# (less); categories 0 parameter, 2 input, 4 activation, 5 gradient, 7 unknown
# (torch.profiler._memory_profiler's indices).
TIMELINE_RAW = [[-1, 1, 37632, 0], [-1, 1, 602112, 2],
                [1722000000000, 2, 4 * MiB, 4], [1722000000200, 2, 2 * MiB, 7],
                [1722000000500, 3, -4 * MiB, 4], [1722000000500, 3, 4 * MiB, 5],
                [1722000000600, 3, -2 * MiB, 7], [1722000000600, 3, 2 * MiB, 7],
                [1722000001000, 4, -4 * MiB, 5], [1722000001100, 4, -2 * MiB, 7]]

if __name__ == "__main__":
    if sys.argv[2] == "timeline-raw":
        with open(sys.argv[1], "w", encoding="utf-8") as out:
            json.dump(TIMELINE_RAW, out)
        sys.exit(0)
    if sys.argv[2] == "timeline-picture":
        with open(sys.argv[1], "w", encoding="utf-8") as out:
            out.write(TIMELINE_PICTURE)
        sys.exit(0)
    snapshot = LAYOUTS[sys.argv[2]]()
    if sys.argv[2].endswith("-page"):
        with open(sys.argv[1], "w", encoding="utf-8") as out:
            out.write(memory_viz_page(snapshot))
    elif sys.argv[2].endswith("-events-json"):  # a device's trace saved alone
        with open(sys.argv[1], "w", encoding="utf-8") as out:
            json.dump(snapshot["device_traces"][0], out, indent=4)
    elif sys.argv[2].endswith("-json"):
        with open(sys.argv[1], "w", encoding="utf-8") as out:
            json.dump(snapshot, out, indent=4)
    else:
        with open(sys.argv[1], "wb") as out:
            pickle.dump(snapshot, out, protocol=4)
