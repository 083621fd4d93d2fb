// Kept in the program rather than installed beside it: `record` works wherever oomlab-cli is,
// installed, in a build folder or carried to a GPU machine.
#include "record_hook.h"

namespace oomlab::cli {

const char* const kRecordHook =
    R"PY(# OOM Lab's startup hook for `oomlab-cli record`: this program's memory, written at an
# out-of-memory error or at exit.
import atexit
import os
import sys


def _oomlab_chain(hook):
    """Runs the sitecustomize this one hides, if the Python has one."""
    import importlib.util
    for folder in sys.path:
        folder = os.path.abspath(folder or ".")
        path = os.path.join(folder, "sitecustomize.py")
        if folder != hook and os.path.isfile(path):
            spec = importlib.util.spec_from_file_location("_oomlab_hidden_sitecustomize", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return


def _oomlab_record():
    snapshot = os.environ.pop("OOMLAB_RECORD_SNAPSHOT", None)
    trace = os.environ.pop("OOMLAB_RECORD_TRACE", None)
    hook = os.path.abspath(os.environ.pop("OOMLAB_RECORD_HOOK", "."))
    # The processes this one starts (workers, launchers) run without the hook.
    kept = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
            if p and os.path.abspath(p) != hook]
    if kept:
        os.environ["PYTHONPATH"] = os.pathsep.join(kept)
    else:
        os.environ.pop("PYTHONPATH", None)
    _oomlab_chain(hook)
    if not snapshot:
        return
    try:
        import torch
    except ImportError:
        sys.stderr.write("oomlab-cli record: this Python has no torch; nothing is recorded\n")
        return
    if torch.cuda.is_available():
        torch.cuda.memory._record_memory_history(max_entries=1000000)
        written = []

        def dump(*_):
            torch.cuda.memory._dump_snapshot(snapshot)
            written.append(True)
        # The allocator's state at the moment of the error; at exit, only if there was none.
        torch._C._cuda_attach_out_of_memory_observer(dump)
        atexit.register(lambda: written or dump())
        return
    from torch.profiler import ProfilerActivity, profile
    settings = dict(activities=[ProfilerActivity.CPU], profile_memory=True, with_stack=True)
    try:  # PyTorch 2.x: every event kept, not only the last cycle's
        profiler = profile(acc_events=True, **settings)
    except TypeError:
        profiler = profile(**settings)
    profiler.__enter__()

    def export():
        profiler.__exit__(None, None, None)
        profiler.export_chrome_trace(trace)
    atexit.register(export)


_oomlab_record()
)PY";

}  // namespace oomlab::cli
