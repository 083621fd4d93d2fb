#include <algorithm>
#include <cstdint>
#include <vector>

#include "cuda_edit.h"
#include "oomlab/allocator/cudnn_conv.h"
#include "oomlab/allocator/cudnn_rnn.h"

namespace oomlab::snapshot::cuda_edit {

// cuDNN's RNN in place of the CPU's: of what the CPU's call allocated, its outputs (the
// output, and the last hidden and cell states) are kept and the rest left out, with their frees:
// the call's temporaries and the buffers it saved for backward. In their place: forward's
// workspace (with a time-major copy of a batch-first input), and, where the call was trained
// (it saved something for backward), cuDNN's reserve until the last of those buffers was freed
// (to the trace's end if none was), and backward's two workspaces (with copies of the output's
// gradient and the input) where its backward began: where the first of those buffers was freed,
// or later, at the first allocation of the autograd nodes of its ops, where the profile told
// them apart (a buffer the CPU's forward kept only for itself is freed before backward).
bool as_cudnn_rnn(const Events& events, const std::vector<std::size_t>& freed,
                  const SnapshotRecurrentCall& call, const Position& at, Edit& edit) {
    const std::vector<std::size_t> made = positions_of(events, call.allocations, at);
    if (made.empty()) {
        return false;
    }
    const allocator::RnnShape& shape = call.shape;
    const std::size_t end = made.back();
    const std::int64_t output = shape.output_bytes();
    const std::int64_t state =
        shape.layers * shape.directions * shape.batch * shape.hidden * shape.element;
    std::int64_t outputs_left = 1;
    std::int64_t states_left = shape.gru ? 1 : 2;
    // What the CPU saved for backward: how much, and where backward freed it.
    std::size_t saved = 0;
    std::size_t first_saved_free = events.size();
    std::size_t last_saved_free = 0;
    for (auto position = made.rbegin(); position != made.rend(); ++position) {
        const std::int64_t size = events[*position].size;
        const bool alive_after = freed[*position] > end;
        if (alive_after && size == output && outputs_left > 0) {
            --outputs_left;
            continue;
        }
        if (alive_after && size == state && states_left > 0) {
            --states_left;
            continue;
        }
        edit.drop_with_free(*position, freed);
        saved += alive_after;
        if (alive_after && freed[*position] < events.size()) {
            first_saved_free = std::min(first_saved_free, freed[*position]);
            last_saved_free = std::max(last_saved_free, freed[*position]);
        }
    }
    const allocator::CudnnRnnBuffers buffers = allocator::cudnn_rnn_buffers(shape);
    const std::int64_t stream = events[end].stream;
    const std::size_t index = events[end].index;
    const auto block = [&](std::int64_t size) { return edit.block(size, index, stream); };
    const std::int64_t input = shape.batch * shape.length * shape.input * shape.element;
    const bool trained = saved > 0;  // else cuDNN keeps no reserve
    const auto reserve = block(buffers.reserve);
    // One workspace, beside a copy of `copied` bytes where the input is batch-first; forward's
    // reserve is made while its workspace is alive, as cuDNN's forward makes both.
    const auto workspace_with_copy = [&](std::vector<allocator::TraceEvent>& into,
                                         std::int64_t copied, bool with_reserve) {
        const auto copy = block(copied);
        const auto workspace = block(buffers.workspace);
        if (call.batch_first) {
            into.push_back(copy.first);
        }
        into.push_back(workspace.first);
        if (with_reserve) {
            into.push_back(reserve.first);
        }
        into.push_back(workspace.second);
        if (call.batch_first) {
            into.push_back(copy.second);
        }
    };
    workspace_with_copy(edit.before[end + 1], input, trained);
    if (!trained || first_saved_free == events.size()) {
        return true;  // no reserve, or one held to the trace's end (it ended before backward)
    }
    std::size_t backward_at = first_saved_free;
    if (call.first_backward != SIZE_MAX) {
        backward_at = std::max(backward_at, at(call.first_backward));
    }
    auto& backward = edit.before[backward_at];
    workspace_with_copy(backward, output, false);
    workspace_with_copy(backward, input, false);
    edit.before[std::max(last_saved_free, backward_at)].push_back(reserve.second);
    return true;
}

// cuDNN's convolution in place of the CPU's: what the CPU's call made and freed inside it (its
// temporaries) is left out, with the frees; what it kept (the output, or the gradients) stays,
// and cuDNN's workspace is made and freed after it: forward's after the output, backward's for
// the input's gradient after that gradient and for the weights' after theirs (each after the
// call's last kept allocation where its gradient is not found by its size).
bool as_cudnn_convolution(const Events& events, const std::vector<std::size_t>& freed,
                          const SnapshotConvolutionCall& call, const Position& at, Edit& edit) {
    const auto workspaces = allocator::cudnn_conv_workspaces(call.shape);
    const std::vector<std::size_t> made = positions_of(events, call.allocations, at);
    const std::size_t end = at(call.end);
    std::vector<std::size_t> kept;
    for (const std::size_t position : made) {
        if (freed[position] >= end) {
            kept.push_back(position);
        }
    }
    if (!workspaces || kept.empty()) {
        return false;
    }
    for (const std::size_t position : made) {
        if (freed[position] < end) {
            edit.drop_with_free(position, freed);
        }
    }
    const auto workspace_after = [&](std::int64_t size, std::size_t position) {
        if (size <= 0) {
            return;
        }
        const auto [alloc, free] =
            edit.block(size, events[position].index, events[position].stream);
        edit.before[position + 1].insert(edit.before[position + 1].end(), {alloc, free});
    };
    const auto kept_of_size = [&](std::int64_t size) {
        const auto found = std::find_if(kept.begin(), kept.end(), [&](std::size_t position) {
            return events[position].size == size;
        });
        return found == kept.end() ? kept.back() : *found;
    };
    const allocator::ConvShape& shape = call.shape;
    if (!call.backward) {
        workspace_after(workspaces->forward, kept.front());
        return true;
    }
    if (call.input_gradient) {
        workspace_after(workspaces->backward_input, kept_of_size(shape.input_bytes()));
    }
    if (call.weight_gradient) {
        workspace_after(workspaces->backward_weight, kept_of_size(shape.weight_bytes()));
    }
    return true;
}

}  // namespace oomlab::snapshot::cuda_edit
