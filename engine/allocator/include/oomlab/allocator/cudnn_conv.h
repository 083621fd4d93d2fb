// What PyTorch's cuDNN convolutions (ATen's cudnn_convolution and its backward: nn.Conv1d and
// nn.Conv2d on CUDA) ask the caching allocator for beside their outputs: a workspace made and
// freed inside forward, and one inside each of backward's two parts (the input's gradient, the
// weights'). cuDNN picks its kernel and sizes their workspace itself, by heuristics that need
// a GPU; the sizes here were recorded on one (bench/gpu/probe_kernels.py, an H200 with cuDNN
// 9.19 and PyTorch 2.11: 3,213 shapes) and fitted by bench/gpu/fit_cudnn_conv.py, whose README
// says how far they carry (bench/results/gpu-2026-12-04-kernels).
#pragma once

#include <array>
#include <cstdint>
#include <optional>

namespace oomlab::allocator {

struct ConvShape {
    int dims = 2;  // spatial dimensions
    std::int64_t batch = 1;
    std::int64_t in_channels = 1;
    std::int64_t out_channels = 1;
    std::array<std::int64_t, 3> size{1, 1, 1};  // the input's, per spatial dimension
    std::array<std::int64_t, 3> kernel{1, 1, 1};
    std::array<std::int64_t, 3> stride{1, 1, 1};
    std::array<std::int64_t, 3> padding{0, 0, 0};
    std::array<std::int64_t, 3> dilation{1, 1, 1};
    std::int64_t groups = 1;
    bool transposed = false;
    std::int64_t element = 4;  // bytes of the type it runs in: 4, or 2 under autocast

    // The output's size along spatial dimension d (0 where the kernel does not fit).
    std::int64_t out_size(int d) const;
    std::int64_t input_bytes() const;
    std::int64_t output_bytes() const;
    std::int64_t weight_bytes() const;
};

struct CudnnConvWorkspaces {
    std::int64_t forward = 0;
    std::int64_t backward_input = 0;   // for the input's gradient
    std::int64_t backward_weight = 0;  // for the weights'
};

// Most calls ask for a copy of the input (channels padded to a multiple of 8 in half precision)
// and of the output in the layout cuDNN's kernels run in: a multiple of those two bytes (io),
// recorded for each dimensionality, kernel size, stride, element size and input under 8
// channels (a first layer). Over the recorded shapes, each left out of its group's multiple:
// the error relative to io is a median 1.3% in forward, 1.3% for the input's gradient and 12.9%
// for the weights' (90th percentiles 98%, 49% and 132%: some shapes ask for nothing, some for
// the input's copy alone, some for more); of all the bytes asked for, 11%, 5% and 19% are
// mispredicted. Kernel sizes and strides off the recorded ones take the nearest recorded.
// Nothing for what was not recorded: three spatial dimensions, grouped, dilated or transposed
// convolutions, and shapes that do not fit.
std::optional<CudnnConvWorkspaces> cudnn_conv_workspaces(const ConvShape& shape);

}  // namespace oomlab::allocator
