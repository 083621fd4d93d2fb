// cuDNN's convolution workspaces against what cuDNN asked for on an H200 (bench/results/
// gpu-2026-12-04-kernels: the cnn script's history, off the recorded grid), and the rules the
// grid showed.
#include <gtest/gtest.h>

#include <cmath>

#include "oomlab/allocator/cudnn_conv.h"

namespace oomlab::allocator {
namespace {

ConvShape conv2d(std::int64_t batch, std::int64_t in, std::int64_t out, std::int64_t size,
                 std::int64_t kernel, std::int64_t stride, std::int64_t element) {
    ConvShape shape;
    shape.batch = batch;
    shape.in_channels = in;
    shape.out_channels = out;
    shape.size = {size, size, 1};
    shape.kernel = {kernel, kernel, 1};
    shape.stride = {stride, stride, 1};
    shape.padding = {kernel / 2, kernel / 2, 0};
    shape.element = element;
    return shape;
}

// cpu_estimate.py's cnn script, fp32: its second layer, 64 to 128 channels of 64 x 64, batch
// 32. In backward cuDNN asked for 100,958,224 bytes for the input's gradient and 105,218,783
// for the weights' (cuda-cnn.pickle.gz). In forward it asked for 33,849,360, the input's copy
// alone, where most recorded shapes of its group ask for the input's and the output's: the
// model's multiple of both is the group's (2.97 times what was asked there).
TEST(CudnnConv, TheCnnScriptsBackwardWorkspacesAreWithinFivePercentOfTheRecorded) {
    const ConvShape shape = conv2d(32, 64, 128, 64, 3, 1, 4);
    EXPECT_EQ(shape.input_bytes(), 33554432);
    EXPECT_EQ(shape.output_bytes(), 67108864);
    const auto workspaces = cudnn_conv_workspaces(shape);
    ASSERT_TRUE(workspaces);
    EXPECT_NEAR(double(workspaces->backward_input) / 100958224.0, 1.0, 0.05);
    EXPECT_NEAR(double(workspaces->backward_weight) / 105218783.0, 1.0, 0.05);
    EXPECT_EQ(workspaces->forward, 33554432 + 67108864);
    // A first layer (3 channels in, fp32) is its group's: next to nothing forward, and no
    // copy for the input's gradient, which the group's recorded shapes never asked for.
    const auto first = cudnn_conv_workspaces(conv2d(32, 3, 64, 64, 3, 1, 4));
    ASSERT_TRUE(first);
    EXPECT_EQ(first->backward_input, 0);
    EXPECT_LT(first->forward, first->backward_weight / 10);
}

// In half precision cuDNN pads the input's channels to a multiple of 8: a first layer of 3
// channels asks for the input's gradient for 8 channels' worth of input, and the output.
TEST(CudnnConv, HalfPrecisionPadsTheInputsChannelsToEight) {
    const ConvShape shape = conv2d(8, 3, 64, 56, 3, 1, 2);
    const auto workspaces = cudnn_conv_workspaces(shape);
    ASSERT_TRUE(workspaces);
    const double io = double(shape.input_bytes()) * 8.0 / 3.0 + double(shape.output_bytes());
    EXPECT_EQ(workspaces->backward_input, std::llround(1.00 * io));
}

// A 1x1 convolution of stride 1 is a GEMM on the tensors as they are: no workspace forward.
// Kernel sizes and strides off the grid take the nearest recorded (a ViT's 16 x 16 patches of
// stride 16 as the 7 x 7 of stride 2); what was never recorded gets nothing.
TEST(CudnnConv, OffTheGridTheNearestRecordedAndNothingForWhatWasNeverRecorded) {
    EXPECT_EQ(cudnn_conv_workspaces(conv2d(64, 256, 64, 56, 1, 1, 4))->forward, 0);
    ConvShape patches = conv2d(64, 3, 384, 224, 16, 16, 4);
    patches.padding = {0, 0, 0};
    EXPECT_EQ(patches.out_size(0), 14);
    const auto workspaces = cudnn_conv_workspaces(patches);
    ASSERT_TRUE(workspaces);
    const double io = double(patches.input_bytes() + patches.output_bytes());
    EXPECT_EQ(workspaces->backward_weight, std::llround(1.05 * io));  // the narrow 7x7's

    ConvShape grouped = conv2d(8, 64, 64, 32, 3, 1, 4);
    grouped.groups = 64;
    EXPECT_FALSE(cudnn_conv_workspaces(grouped));
    ConvShape dilated = conv2d(8, 64, 64, 32, 3, 1, 4);
    dilated.dilation = {2, 2, 1};
    EXPECT_FALSE(cudnn_conv_workspaces(dilated));
    ConvShape transposed = conv2d(8, 64, 64, 32, 3, 1, 4);
    transposed.transposed = true;
    EXPECT_FALSE(cudnn_conv_workspaces(transposed));
    ConvShape volume = conv2d(8, 64, 64, 32, 3, 1, 4);
    volume.dims = 3;
    EXPECT_FALSE(cudnn_conv_workspaces(volume));
    ConvShape unfit = conv2d(8, 64, 64, 2, 7, 1, 4);  // 7 x 7 over 2 x 2, unpadded
    unfit.padding = {0, 0, 0};
    EXPECT_FALSE(cudnn_conv_workspaces(unfit));
}

}  // namespace
}  // namespace oomlab::allocator
