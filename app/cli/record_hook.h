// The Python startup hook `oomlab-cli record` runs its command with (a sitecustomize.py in a
// folder of its own, put first on PYTHONPATH): the program itself is run unchanged.
#pragma once

namespace oomlab::cli {

// The hook's source. It reads OOMLAB_RECORD_SNAPSHOT (where a CUDA memory snapshot goes),
// OOMLAB_RECORD_TRACE (where the profiler's trace goes without CUDA) and OOMLAB_RECORD_HOOK
// (its own folder), and removes them, so only the first Python process records.
extern const char* const kRecordHook;

}  // namespace oomlab::cli
