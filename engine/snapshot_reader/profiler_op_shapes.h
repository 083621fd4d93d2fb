// The calls of the ops that run otherwise on a GPU (the RNNs and convolutions cuDNN runs, the
// CPU's attention kernel, dropout), as a profiler that recorded shapes (record_shapes=True)
// wrote their inputs: "Input Dims" and the scalars ("Concrete Inputs", written since PyTorch
// 2.1). Nothing where they say otherwise than the op's usual overload, are missing, or give
// sizes no program runs (a damaged or hostile file's, whose buffers would pass what 64 bits
// hold).
#pragma once

#include <cstdint>
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
// allocations left empty.
std::optional<SnapshotAttentionCall> attention_call(const TraceOpInputs& inputs);

// aten::dropout in training (0 < p < 1): its mask's bytes on CUDA, one an element of the input.
bool is_dropout(const std::string& op);
std::optional<std::int64_t> dropout_mask_bytes(const TraceOpInputs& inputs);

// aten::sum of a float tensor over its leading dimensions: the buffer CUDA's reduction kernel
// takes for it (none: 0); nothing for another sum.
bool is_sum(const std::string& op);
std::optional<std::int64_t> sum_buffer_bytes(const TraceOpInputs& inputs);

// The matrix products CUDA runs with cuBLAS, whose first call in a thread makes its workspace.
bool is_matrix_product(const std::string& op);

}  // namespace oomlab::snapshot
