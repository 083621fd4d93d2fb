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
    """Runs the sitecustomize this one hides, if the Python has one; from then on it is the
    module `import sitecustomize` gives."""
    import importlib.util
    for folder in sys.path:
        folder = os.path.abspath(folder or ".")
        path = os.path.join(folder, "sitecustomize.py")
        if folder != hook and os.path.isfile(path):
            spec = importlib.util.spec_from_file_location("sitecustomize", path)
            module = importlib.util.module_from_spec(spec)
            sys.modules["sitecustomize"] = module
            spec.loader.exec_module(module)
            return


def _oomlab_note(hook, what):
    """Tells oomlab-cli how far the hook came (it says why nothing was recorded)."""
    try:
        with open(os.path.join(hook, "reached"), "w") as note:
            note.write(what)
    except OSError:
        pass


def _oomlab_write(hook, path, write):
    """Writes the record to `path`; where it cannot (the program removed the folder it goes
    to), says why rather than leave oomlab-cli to guess. The profiler only logs a failed
    export: what is on disk after it tells."""
    _oomlab_note(hook, "writing")
    try:
        write()
    except OSError as error:
        _oomlab_note(hook, "unwritable " + str(error))
        return
    folder = os.path.dirname(path)
    if not os.path.isdir(folder):
        _oomlab_note(hook, f"unwritable {folder}: the folder is no longer there")
    elif not os.path.exists(path):
        _oomlab_note(hook, f"unwritable {path}: nothing was written there")


def _oomlab_children_leave_quietly(owner):
    """A process forked while the profiler runs inherits its threads' locks but not the
    threads, and PyTorch's exit handlers then wait on them for ever. A child therefore leaves,
    after Python's exit handlers (this one, registered first, runs last), with the status it
    was leaving with and without those of the C++ libraries."""
    state = {"status": 0}

    def exit_with(status=None):
        state["status"] = status
        raise SystemExit(status)

    def excepthook(kind, value, traceback):
        state["status"] = 1
        sys.__excepthook__(kind, value, traceback)

    def in_child():
        sys.exit = exit_with
        sys.excepthook = excepthook

    def leave():
        if os.getpid() == owner:
            return
        status = state["status"]
        if status is not None and not isinstance(status, int):
            sys.stderr.write(f"{status}\n")
            status = 1
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(status or 0)
    atexit.register(leave)
    os.register_at_fork(after_in_child=in_child)


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
    _oomlab_note(hook, "python")
    try:
        import torch
    except ImportError:
        sys.stderr.write("oomlab-cli record: this Python has no torch; nothing is recorded\n")
        return
    _oomlab_note(hook, "torch")
    # Only this process writes: a child it forks inherits the hook's exit handlers, and must
    # neither export this process's history nor wait on a profiler it does not run.
    owner = os.getpid()
    # Stopped with SIGTERM (a scheduler's time limit, `kill`), the program leaves through its
    # exit handlers, so its memory is still written.
    import signal
    if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, lambda number, _: sys.exit(128 + number))
    if torch.cuda.is_available():
        torch.cuda.memory._record_memory_history(max_entries=1000000)
        written = []

        def dump(*_):
            if os.getpid() == owner:
                _oomlab_write(hook, snapshot, lambda: torch.cuda.memory._dump_snapshot(snapshot))
                written.append(True)
        # The allocator's state at the moment of the error; at exit, only if there was none.
        torch._C._cuda_attach_out_of_memory_observer(dump)
        atexit.register(lambda: written or dump())
        return
    _oomlab_children_leave_quietly(owner)
    from torch.profiler import ProfilerActivity, profile
    # Shapes too: the GPU estimate makes an RNN's calls as cuDNN would from their shapes.
    settings = dict(activities=[ProfilerActivity.CPU], profile_memory=True, with_stack=True,
                    record_shapes=True)
    try:  # PyTorch 2.x: every event kept, not only the last cycle's
        profiler = profile(acc_events=True, **settings)
    except TypeError:
        profiler = profile(**settings)
    profiler.__enter__()

    def export():
        if os.getpid() == owner:
            profiler.__exit__(None, None, None)
            _oomlab_write(hook, trace, lambda: profiler.export_chrome_trace(trace))
    atexit.register(export)


_oomlab_record()
)PY";

}  // namespace oomlab::cli
