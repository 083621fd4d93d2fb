// The calls of the ops that run otherwise on a GPU (the RNNs and convolutions cuDNN runs, the
// CPU's attention kernel), as
// a profiler that recorded shapes (record_shapes=True) wrote their inputs: "Input Dims" and the
// scalars ("Concrete Inputs", written since PyTorch 2.1). Nothing where they say otherwise than
// the op's usual overload, are missing, or give sizes no program runs (a damaged or hostile
// file's, whose buffers would pass what 64 bits hold).
#pragma once

#include <optional>
#include <string>

#include "oomlab/snapshot_reader/snapshot_report.h"
#include "profiler_trace_events.h"

namespace oomlab::snapshot {

// aten::lstm and aten::gru (not a packed sequence's overload); the allocations left empty.
std::optional<SnapshotRecurrentCall> recurrent_call(const std::string& op,
                                                    const TraceOpInputs& inputs);

// aten::convolution and aten::convolution_backward; the allocations and end left empty.
std::optional<SnapshotConvolutionCall> convolution_call(const std::string& op,
                                                        const TraceOpInputs& inputs);

bool is_convolution(const std::string& op);
bool is_recurrent(const std::string& op);

// aten::_scaled_dot_product_attention_math: the query's, key's and value's bytes; the
// backward's allocations left empty.
std::optional<SnapshotAttentionCall> attention_call(const TraceOpInputs& inputs);

}  // namespace oomlab::snapshot
