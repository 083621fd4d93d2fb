// What a CUDA memory snapshot says, from the pickle PyTorch writes
// (torch.cuda.memory._record_memory_history() then _dump_snapshot("x.pickle")) or the engine
// writes (debug.memory_snapshot), or from the Chrome trace of PyTorch's profiler
// (profile_memory=True, on the CPU too; device -1 is the CPU): for each device, what was reserved
// and allocated at the end, the peak found by replaying its trace of events, what was alive then
// grouped by the user's own source line, the out-of-memory events, and the free memory's
// fragmentation.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "oomlab/allocator/cudnn_conv.h"
#include "oomlab/allocator/cudnn_rnn.h"

namespace oomlab {

// The line (and kind) of what was alive at the peak but allocated before the trace began.
inline constexpr const char* kAllocatedBeforeTrace = "(allocated before the trace began)";
// Its line in a snapshot without a trace: blocks carry frames only if allocated while the
// history was being recorded.
inline constexpr const char* kAllocatedWhileHistoryOff = "(allocated while the history was off)";
// Whether a line is one of those two: memory that no frame can name.
inline bool allocated_unrecorded(const std::string& where) {
    return where == kAllocatedBeforeTrace || where == kAllocatedWhileHistoryOff;
}
// Where a block's stack has no Python frame (recorded without them, or made by C++ alone).
inline constexpr const char* kNoPythonFrame = "(no Python frame recorded)";
// The kind of what a profiler's trace shows allocated inside the CPU's attention kernel
// (scaled_dot_product_attention's math one, which keeps each head's weights for backward).
inline constexpr const char* kMathAttentionKind = "attention (the CPU's math kernel)";
// The kind of what a snapshot's C++ frames show allocated inside that math kernel on a GPU,
// where it is the fallback when no fused kernel takes the inputs: forward's, kept for backward.
inline constexpr const char* kMathAttentionFallbackKind =
    "attention (the math kernel, not a fused one)";
// The kind of what its backward allocates (the gradients of those weights among them).
inline constexpr const char* kMathAttentionBackwardKind =
    "attention's backward (the CPU's math kernel)";

struct SnapshotLine {
    std::string where;       // "train.py:41 (forward)", the first frame outside torch; or why none
                             // (by kind: "backward", "optimizer step", ...)
    std::int64_t bytes = 0;  // as the file records it: a snapshot's trace, what was asked for
    std::int64_t blocks = 0;
    // The blocks' sizes where the file records the requests (a snapshot's trace): each rounded
    // as the caching allocator rounds it, to 512 B at least (a 2 B scalar holds 512 B). 0
    // where `bytes` are the blocks' already.
    std::int64_t block_bytes = 0;
};

// A line's figure as a report prints it: what its blocks hold; and its blocks in words, with
// what was asked for where the allocator's rounding shows in print ("1 block; 2 B asked for").
std::int64_t line_bytes_held(const SnapshotLine& line);
std::string line_blocks_words(const SnapshotLine& line);

// An event as the reports name it to a person: counted from 1, so that "event N" is the one
// after which the state "after event N" is told (the SQL tables and the JSON keep indices).
constexpr std::size_t event_number(std::size_t index) {
    return index + 1;
}

struct SnapshotOom {
    std::size_t event = 0;  // its index in the device's trace
    std::int64_t requested = 0;
    std::int64_t device_free = 0;
    std::int64_t allocated = 0;  // by the replay, at that moment
    std::int64_t reserved = 0;   // likewise
};

// Where a stage the program annotated ran (torch.profiler.record_function, the optimizer's
// step: PyTorch's "external_annotations"): from the state after `first` events to the state
// after `end` events.
struct SnapshotStageSpan {
    std::uint32_t stage = 0;  // in SnapshotDevice::stages
    std::size_t first = 0;
    std::size_t end = 0;
};

// The most allocated while a stage ran, over every time it ran.
struct SnapshotAnnotatedStage {
    std::string name;
    std::size_t spans = 0;  // how many times it ran
    std::int64_t peak_allocated = 0;
    std::size_t peak_event = 0;  // the state (after this many events) where it was reached
    std::int64_t reserved_at_peak = 0;
    std::size_t events = 0;  // the trace's events inside its spans; 0: each time it ran
                             // between two (a short stage that allocated and freed nothing)
};

// What was allocated and reserved after the first `event` events of a device's trace.
struct SnapshotPoint {
    std::size_t event = 0;
    std::int64_t allocated = 0;
    std::int64_t reserved = 0;
};

// One change a device's trace made, kept so the state after any event can be told.
// Forty bytes: a trace of millions of events is kept as these alone. (A trace of 2^32 events
// is past any file read: 16 GiB.)
struct SnapshotTraceChange {
    enum class What : std::uint8_t { Alloc, Free, Reserve, Release };
    static constexpr std::uint32_t kNeverFreed = UINT32_MAX;
    static constexpr std::size_t kMostStreams = UINT16_MAX + 1;

    std::uint32_t event = 0;  // its index in the trace
    std::uint32_t stack = 0;  // an allocation's source line and kind: SnapshotDevice::stacks
    std::int64_t address = 0;
    std::int64_t size = 0;
    // An allocation's: the event that frees it (kNeverFreed: alive at the end); set by the
    // replay.
    std::uint32_t freed = kNeverFreed;
    std::uint16_t stream = 0;  // SnapshotDevice::streams: a trace names a few
    What what = What::Alloc;
    bool pages = false;  // Reserve and Release: pages of an expandable segment (segment_map)
};
static_assert(sizeof(SnapshotTraceChange) <= 32, "a trace's events are kept as these alone");

// What an allocation's stack says: its source line and kind, and the metadata the program set
// for it (torch.cuda.memory._set_memory_metadata, a trace entry's "user_metadata"), each an
// index in SnapshotDevice::names (kNoMetadata: none set); each distinct triple once.
struct SnapshotStack {
    static constexpr std::uint32_t kNoMetadata = UINT32_MAX;
    std::uint32_t line = 0;
    std::uint32_t kind = 0;
    std::uint32_t metadata = kNoMetadata;
};

// An allocation alive from before the trace began to the end, whose block carries the frames
// that made it (a history begun late, a ring buffer that dropped its event, PyTorch 2.0's
// block "history"): named by them rather than as allocated before the trace.
struct SnapshotHeldBlock {
    std::int64_t size = 0;
    std::uint32_t stack = 0;  // in SnapshotDevice::stacks
};

// The memory of one of the allocator's pools at the end: the default pool (0, 0), or a private
// one (a CUDA graph's, a torch.cuda.MemPool's) whose segments serve only its own requests.
struct SnapshotPool {
    std::int64_t owner = 0;  // segment_pool_id, as PyTorch numbers it: (owner, id)
    std::int64_t id = 0;
    std::int64_t segments = 0;
    std::int64_t reserved = 0;
    std::int64_t allocated = 0;
};

// A segment as the snapshot left it: where it is and what of it was allocated.
struct SnapshotSegmentLayout {
    std::int64_t address = 0;
    std::int64_t size = 0;
    std::int64_t stream = 0;
    bool expandable = false;
    bool small = false;  // of the small pool (requests up to 1 MiB)
    // segment_pool_id, (0, 0) the default pool: a private pool's segments (a CUDA graph's, a
    // torch.cuda.MemPool's) serve only its own requests.
    std::pair<std::int64_t, std::int64_t> pool{0, 0};
    struct Block {
        std::int64_t address = 0;
        std::int64_t size = 0;
        bool allocated = false;
    };
    std::vector<Block> blocks;
};

// What was allocated, reserved and alive after the first `event` events of a device's trace.
struct SnapshotMoment {
    std::size_t event = 0;
    std::int64_t allocated = 0;
    std::int64_t reserved = 0;
    std::vector<SnapshotLine> by_line;  // largest first, at most ten
    std::vector<SnapshotLine> by_kind;
    // By the metadata the program set; empty when it set none.
    std::vector<SnapshotLine> by_metadata;
};

// An RNN's forward call in a CPU profile recorded with shapes (aten::lstm, aten::gru): what a
// GPU's cuDNN would make of it, what the CPU allocated inside it (event indices), and the first
// allocation of its backward (autograd's nodes named by the sequence numbers of its ops; SIZE_MAX
// where none was told apart).
struct SnapshotRecurrentCall {
    allocator::RnnShape shape;
    bool batch_first = false;  // cuDNN then works on a time-major copy of the input
    std::vector<std::size_t> allocations;
    std::size_t first_backward = SIZE_MAX;
};

// A convolution's call in a CPU profile recorded with shapes (aten::convolution, or its
// backward, aten::convolution_backward): what a GPU's cuDNN would make of it, what the CPU
// allocated inside it (event indices), and the first event after it.
struct SnapshotConvolutionCall {
    allocator::ConvShape shape;
    bool backward = false;
    bool input_gradient = false;  // backward: which gradients it computes
    bool weight_gradient = false;
    std::vector<std::size_t> allocations;
    std::size_t end = 0;
};

// A call of the CPU's attention kernel whose inputs a profile recorded with shapes, with what
// it allocated and what its backward did (event indices): backward's autograd nodes carry the
// sequence numbers of the ops they differentiate.
struct SnapshotAttentionCall {
    std::int64_t query_bytes = 0;
    std::int64_t key_bytes = 0;
    std::int64_t value_bytes = 0;
    std::int64_t element = 4;
    // The fused kernels' log-sum-exp, kept for backward: a float for each row of the query, its
    // rows rounded up to 32 (the memory-efficient kernel's tiles).
    std::int64_t logsumexp_bytes = 0;
    std::vector<std::size_t> allocations;
    // What the op the program called made before the kernel (a boolean mask made floats).
    std::vector<std::size_t> allocations_before;
    std::vector<std::size_t> backward_allocations;
    // The first event of the op the program called, the first after the kernel, the first after
    // that op.
    std::size_t begin = 0;
    std::size_t end = 0;
    std::size_t called_end = 0;
};

// A dropout in training in a CPU profile recorded with shapes: the CPU keeps its noise, a
// tensor of the input's type, where CUDA's fused kernel keeps a mask of one byte an element.
struct SnapshotDropoutMask {
    std::size_t event = 0;  // the noise's allocation
    std::int64_t mask_bytes = 0;
};

struct SnapshotDevice {
    int index = 0;
    std::int64_t segments = 0;
    std::int64_t reserved = 0;            // at the end: the segments' sizes
    std::int64_t allocated = 0;           // at the end: their allocated blocks
    std::int64_t cached_free = 0;         // reserved, held by no tensor
    std::int64_t largest_free_block = 0;  // the largest of those pieces (a trace: not known)
    // Freed by the program but not yet reusable: blocks waiting for work on another stream
    // (record_stream) to end, "active_pending_free"; neither allocated nor cached free.
    std::int64_t pending_free = 0;
    // Read from a profiler's trace: its totals and events, no segments or blocks (so no pieces
    // of the cached memory); where its events carry no totals (PyTorch before 1.10), nothing
    // was recorded of what was reserved.
    bool from_trace = false;
    // False for a device's trace saved alone, without the dump's segments: what it held at the
    // end is the trace's own reckoning, each figure from the least that keeps every moment at or
    // above zero.
    bool segments_dumped = true;
    bool reserved_recorded = true;
    bool totals_recorded = true;  // a trace's events carry the profiler's totals (1.10 and later)
    // What the program asked for of `allocated` (the blocks' requested_size, PyTorch 2.x): the
    // rest is the allocator's rounding. -1 where some allocated block does not say.
    std::int64_t requested = -1;
    // Memory by pool at the end, the default pool first; empty where the snapshot names none
    // (segment_pool_id, PyTorch 2.1 and later).
    std::vector<SnapshotPool> pools;
    std::size_t events = 0;
    std::int64_t peak_allocated = 0;  // over the trace (the end state when there is none)
    std::int64_t peak_reserved = 0;
    std::size_t peak_reserved_event = 0;  // where reserved first reached it (events: the end)
    std::int64_t reserved_at_peak = 0;    // when allocated peaked
    std::size_t peak_event = 0;           // where allocated peaked (events: at the end)
    std::vector<SnapshotLine> at_peak;    // alive at the peak, largest first
    // The same by what it was for, as the frames tell: forward, backward, optimizer step, data
    // transfer, other (and the engine's own setup and evaluation); largest first.
    std::vector<SnapshotLine> at_peak_by_kind;
    std::vector<SnapshotLine> at_peak_by_metadata;  // empty when the program set none
    std::vector<SnapshotOom> ooms;
    // Allocated and reserved over the trace, in event order: every event of a short trace,
    // about 2,000 points of a long one; the peak and every out-of-memory event among them.
    std::vector<SnapshotPoint> timeline;
    // Every allocation, free and segment change of the trace, and the lines and kinds they name.
    // A deque: millions of them grow as they are read with no copy of those before (a vector
    // doubling would hold both for a moment).
    std::deque<SnapshotTraceChange> changes;
    std::vector<std::int64_t> streams;  // the streams the changes name, as the trace numbers them
    // The pool of each of `streams` (a stream two pools used is in it once for each), where the
    // trace's entries name their pool ("pool_id", PyTorch 2.12 and later); empty where none does.
    std::vector<std::pair<std::int64_t, std::int64_t>> stream_pools;
    std::vector<SnapshotStack> stacks;
    std::vector<std::string> names;
    std::vector<SnapshotHeldBlock> held_from_start;
    std::vector<SnapshotSegmentLayout> layout;  // the segments at the end
    // The stages the program annotated, in the order first seen, and where each ran, in the
    // order they ended; empty when it annotated none. Why they could not be placed, if so.
    std::vector<SnapshotAnnotatedStage> stages;
    std::vector<SnapshotStageSpan> stage_spans;
    std::string stages_problem;
    // Made from a profile (torch.cuda._memory_viz._profile_to_snapshot, whose entries carry
    // PyTorch's tensor categories): its segment only spans the addresses its tensors had, so
    // its segments, reserved and cached figures are zero; its blocks are those alive at the end.
    bool from_profile = false;
    // A trace's GPU work: kernels, copies and fills, and whether it holds a GPU's memory events.
    std::size_t gpu_kernels = 0;
    bool gpu_memory_recorded = false;
    // Recorded on ROCm (a trace's "hip_runtime_version"): its allocator's settings are HIP's.
    bool rocm = false;
    // A CPU profile's RNN calls, where it recorded their shapes; empty otherwise.
    std::vector<SnapshotRecurrentCall> recurrent_calls;
    // Its convolutions' calls, forward and backward, where it recorded their shapes.
    std::vector<SnapshotConvolutionCall> convolution_calls;
    // Its calls of the CPU's attention kernel, where it recorded their shapes.
    std::vector<SnapshotAttentionCall> attention_calls;
    std::vector<SnapshotDropoutMask> dropout_masks;
    // Its sums over a float tensor's leading dimensions (a bias's gradient), where it recorded
    // their shapes: the first event after each, and the buffer CUDA's reduction kernel would take
    // there (allocator::cuda_sum_buffer_bytes), where it would take one.
    std::vector<std::pair<std::size_t, std::int64_t>> reduction_buffers;
    // The first allocation inside a matrix product that CUDA runs with cuBLAS, in forward and in
    // backward (not one of the calls above, which cuDNN or a fused kernel run); SIZE_MAX if none.
    std::size_t first_matrix_product = SIZE_MAX;
    std::size_t first_backward_matrix_product = SIZE_MAX;
    // Where the trace does not add up (a history begun late, frees lost, sizes or totals that
    // disagree with the segments), each with how it was taken: one sentence each.
    std::vector<std::string> trace_problems;
};

struct SnapshotReport {
    std::string source;
    std::vector<SnapshotDevice> devices;  // those with segments or events
    // The devices the process saw: a snapshot's "device_traces" holds a list for each, empty
    // or not (0 where it has none).
    std::size_t devices_seen = 0;
    // The settings of the OOM Lab run that recorded it, as JSON; empty for other programs'.
    std::string experiment_json;
    // Why an "oomlab_experiment" that is not such settings was left out; empty otherwise.
    std::string experiment_problem;
    // The allocator's settings when it was dumped (PyTorch 2.x writes "allocator_settings"),
    // in PYTORCH_CUDA_ALLOC_CONF's syntax; unset for snapshots without them.
    std::optional<std::string> alloc_conf;
    // What of the recorded settings PyTorch would not take and the replay leaves out (a
    // garbage_collection_threshold of nan); empty when nothing.
    std::string alloc_conf_problem;
};

// The index of the CPU in a profiler's trace (the profiler numbers it so), and of the pinned
// host memory PyTorch's host allocator served (a snapshot's "host_segments" and "host_traces",
// recorded with record_pinned_host_memory=True, PyTorch 2.12 and later).
constexpr int kProfilerCpuIndex = -1;
constexpr int kPinnedHostIndex = -2;

// "device 0", "the CPU" or "pinned host memory".
std::string snapshot_device_name(int index);

// Whether a device held so little (under 1 MiB at its peak, nothing reserved, no
// out-of-memory) that a report says so in one line, without advice: the CPU's few bytes in a
// profile of a GPU program.
bool holds_little(const SnapshotDevice& device);

// The moment a report's figures "at the peak" are taken at: the peak, or, where no trace says
// when that was, the dump (its end state is all the file holds).
inline const char* peak_moment(const SnapshotDevice& device) {
    return device.events == 0 ? "the dump" : "the peak";
}

// A trace's CPU in a program that ran on a GPU (the trace holds a GPU's memory or its
// kernels): host memory, which no estimate puts on a GPU.
inline bool host_of_a_gpu_run(const SnapshotDevice& device) {
    return device.from_trace && device.index < 0 &&
           (device.gpu_kernels > 0 || device.gpu_memory_recorded);
}

// The order a report shows its devices in: those that held memory before those that held
// little, GPUs (by number) before the CPU.
void order_devices(std::vector<SnapshotDevice>& devices);

// Whether PyTorch's CUDA caching allocator served the device's requests, so that its segments
// are the allocator's: not the profiler's CPU, not a profile made into a snapshot.
inline bool served_by_caching_allocator(const SnapshotDevice& device) {
    return device.index >= 0 && !device.from_profile;
}

// Whether an out-of-memory came with the device's memory free for the request (and the
// segment it would open): then a limit on the process refused it
// (torch.cuda.set_per_process_memory_fraction), a limit at least what was reserved and under
// that plus the request.
bool refused_by_process_limit(const SnapshotOom& oom);
// "the device had room: a limit on this process refused it (...), set between 2.80 GiB
// reserved and 3.08 GiB with the request"; empty where the device itself was short.
std::string process_limit_note(const SnapshotOom& oom);

// A device's figures in the words `snapshot show` and the snapshot window give them, as far as
// the file records them: "5 segments, 250.0 MiB reserved, 8.5 KiB allocated at the end"; "peak
// allocated: 2.10 GiB after event 1000 of 1040, reserved at that moment 250.0 MiB; most reserved
// at any time 250.0 MiB"; "cached but free at the end: 28.9 MiB, the largest piece 8.0 MiB"
// (empty where nothing says what was reserved).
std::string snapshot_end_words(const SnapshotDevice& device);
std::string snapshot_peak_words(const SnapshotDevice& device);
std::string snapshot_free_words(const SnapshotDevice& device);

// A snapshot that holds no device's memory, in words: when PyTorch dumps such a one, and the
// allocator's settings it recorded.
std::string snapshot_empty_words(const SnapshotReport& report);

// What the end state says beyond its totals, one sentence each, where the snapshot records
// it: the allocator's rounding (what was asked for of what was allocated), memory by pool,
// blocks freed but waiting on another stream, figures that do not add up.
std::vector<std::string> snapshot_end_notes(const SnapshotDevice& device);

// The state after the first `event` events (clamped to the trace) of `device`.
SnapshotMoment snapshot_moment(const SnapshotDevice& device, std::size_t event);

// The stages the program had annotated that were running at the state after `event` events,
// and its stages by their peaks, the highest first.
std::vector<std::string> stages_at(const SnapshotDevice& device, std::size_t event);
std::vector<SnapshotAnnotatedStage> stages_by_peak(const SnapshotDevice& device);

// How far reading a file has come, phase by phase: "reading" the file (`done` and `total` its
// bytes, compressed ones for a gzipped file; a trace is collected as it is read), then
// "replaying" each device's trace (its events); "collecting" a trace whose list does not begin
// with an event. Called every megabyte or 65,536 events or so; may throw Cancelled.
struct SnapshotStage {
    const char* phase = "reading";
    std::uint64_t done = 0;
    std::uint64_t total = 0;
};
using SnapshotProgress = std::function<void(const SnapshotStage& stage)>;

// Reads the snapshot at `path` (gzipped or not) a chunk at a time; throws BadInput naming the
// file when it is not one. JSON (after any byte-order mark) is read as a profiler's trace, a
// pickle of protocol 2 to 5 as a snapshot; anything else is refused.
SnapshotReport read_snapshot_report(const std::string& path, const SnapshotProgress& progress = {});
SnapshotReport snapshot_report_from_bytes(const std::string& bytes, const std::string& source);

// As `snapshot show --json` writes it (one line); with `at`, each device's state after that
// many events too (key "at_event", as `snapshot show --at N`).
std::string snapshot_report_json(const SnapshotReport& report,
                                 std::optional<std::size_t> at = std::nullopt);

}  // namespace oomlab
