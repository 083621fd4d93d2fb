// A profiler's Chrome trace read in one pass as it comes from its file (a SAX handler of
// nlohmann's lexer over a stream of the file's chunks), keeping only what profiler_trace.cpp
// uses: the spans of each thread and the memory events of each device. The document's limits
// are applied as it is read (64 levels, no key twice in an object, every item of the events
// list an object), and neither its text nor a tree of it is held whole: a trace of a million
// events takes about the memory of its spans and events, and time linear in its text.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pickle_reader.h"

namespace oomlab::snapshot {

// What the profiler wrote of an op's inputs when it recorded shapes (record_shapes=True): each
// input's dims (of a list of tensors, its first tensor's; none for a scalar), the scalars as
// text ("Concrete Inputs", PyTorch 2.x) and the first input's type ("float", "c10::Half").
struct TraceOpInputs {
    std::vector<std::vector<std::int64_t>> dims;
    std::vector<std::string> concrete;
    std::string first_type;
};

inline constexpr std::uint32_t kNoSequence = UINT32_MAX;

struct TraceSpan {
    double start = 0;
    double end = 0;
    std::string name;
    bool python = false;  // a Python function ("file.py(12): name"), else an op or annotation
    // The program's own (torch.profiler.record_function, the optimizer's step and zero_grad,
    // the profiler's ProfilerStep#N): a stage, as a snapshot's external_annotations are.
    bool annotation = false;
    // An op's "Sequence number", which its backward's autograd node carries too: its low 32
    // bits (two ops of one trace are never 2^32 apart), held where the bools leave room (a
    // trace has millions of spans); kNoSequence where it has none.
    std::uint32_t sequence = kNoSequence;
    // Kept for the ops the GPU estimate makes otherwise on CUDA (keeps_inputs), else empty.
    std::shared_ptr<const TraceOpInputs> inputs;
};

// The CPU's attention kernel, which a GPU's fused ones replace, and the op programs call it
// through.
inline constexpr const char* kMathAttentionOp = "aten::_scaled_dot_product_attention_math";
inline constexpr const char* kAttentionOp = "aten::scaled_dot_product_attention";

// The ops whose inputs a span keeps: the RNNs and convolutions cuDNN runs on a GPU, the CPU's
// attention kernel, dropout and sums (as_on_cuda.cpp).
bool keeps_inputs(const std::string& op);

struct TraceMemoryEvent {
    double time = 0;
    std::int64_t address = 0;
    std::int64_t bytes = 0;  // > 0 allocated, < 0 freed
    std::int64_t total_allocated = 0;
    std::int64_t total_reserved = 0;
    std::string thread;
};

struct TraceEvents {
    std::map<std::string, std::vector<TraceSpan>> spans;  // by thread ("tid" as JSON text)
    // By device: the profiler's (Device Type, Device Id).
    std::map<std::pair<std::int64_t, std::int64_t>, std::vector<TraceMemoryEvent>> memory;
    bool profile_memory = false;  // the document says it was recorded with profile_memory on
    std::size_t gpu_kernels = 0;  // kernels, copies and fills the GPU ran: the program used one
    bool rocm = false;            // "hip_runtime_version" at the top: recorded on ROCm
};

// Reads `input` to its end a chunk at a time, calling `after_chunk` after each. Throws BadInput
// naming `source`: not JSON, nested too deep, a key twice, an event that is not an object, or
// no "traceEvents" list (a document that is a list is taken as the list itself).
TraceEvents read_trace_events(PickleInput& input, const std::string& source,
                              const std::function<void()>& after_chunk = {});

}  // namespace oomlab::snapshot
