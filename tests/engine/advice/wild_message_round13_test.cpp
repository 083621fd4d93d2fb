// The real messages of round 13 (tests/data/wild/messages 934-993) that a reading got wrong:
// figures the cache and the free memory held together, devices nearly full, a context taken for
// another process, a ComfyUI node loading its model, a too large tensor that is no language
// model's logits, and processes the kernel killed.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <utility>

#include "oomlab/advice/oom_message.h"
#include "oomlab/common/errors.h"
#include "wild_message_text.h"

namespace oomlab {
namespace {

using test::wild_message;
using Work = OomMessage::Work;

using test::Told;
using test::told;

bool begins(const std::string& line, const std::string& words) {
    return line.rfind(words, 0) == 0;
}

// The cache alone was less than the request, the device's free memory too, both together more
// (935: 1.26 GiB and 826.94 MiB for 1.57 GiB; 962: the tensors held 973 MiB of 8 GiB): the
// cache's pieces lay in segments that still held tensors. It had said the tensors filled it.
TEST(WildMessagesRound13, TheCacheAndTheFreeMemoryTogetherAreFragmentation) {
    for (const char* file :
         {"935-monai-sliding-window-count-map-val-log-after-52-images.txt",
          "962-solo-mmdet-test-progress-bar-elided-traceback-dots-eval-8g.txt",
          "963-czsl-open-world-evaluate-predictions-scores-mask-bias-eval-on-gpu.txt"}) {
        const Told t = told(file);
        EXPECT_EQ(t.e.verdict, OomVerdict::Fragmentation) << file << ":\n" << t.text;
        EXPECT_NE(t.e.summary.find("together more than the"), std::string::npos) << t.text;
        EXPECT_EQ(t.e.summary.find("did not fit in what was left"), std::string::npos) << t.text;
    }
    // An evaluation's scores (963): what makes the evaluation hold less follows the settings.
    const Told scores =
        told("963-czsl-open-world-evaluate-predictions-scores-mask-bias-eval-on-gpu.txt");
    EXPECT_EQ(scores.e.message.work, OomMessage::Work::Evaluation);
    EXPECT_NE(scores.tries.find("keep its results off the device"), std::string::npos)
        << scores.text;
}

// Joined, the cache and the free memory would leave under 2% of the device (934, 941, 954):
// what holds less comes before the allocator's settings.
TEST(WildMessagesRound13, ADeviceNearlyFullIsToldToHoldLessFirst) {
    for (const char* file :
         {"934-nnunet-v1-l-backward-1x-cached-titanx-10gib.txt",
          "941-dreambooth-ext-exception-while-training-allocated-reserved-gb-lines.txt",
          "954-openrlhf-ppo-rank7-process-pid-has-not-this-process-sigkill-handler.txt"}) {
        const Told t = told(file);
        ASSERT_TRUE(t.e.nearly_full) << file << ":\n" << t.text;
        ASSERT_FALSE(t.e.tries.empty());
        EXPECT_TRUE(begins(t.e.tries[0], "a smaller batch")) << file << ":\n" << t.text;
    }
}

// About 1.3 GiB outside PyTorch in one process (967 on a V100, 969 on an A100) is what a context
// and PyTorch's kernels take: not another process to stop first.
TEST(WildMessagesRound13, AContextsSizeOutsidePyTorchIsNoOtherProcessToStop) {
    for (const char* file : {"967-chatglm-lora-v100-zh-title-and-prose-after-1x-message.txt",
                             "969-attentionlens-error-prefix-glued-to-file-line-adam-foreach-sqrt-"
                             "optimizer-step.txt"}) {
        const Told t = told(file);
        ASSERT_FALSE(t.e.tries.empty());
        EXPECT_FALSE(begins(t.e.tries[0], "see what else holds the device")) << t.text;
        EXPECT_EQ(t.text.find("without them it would have fit"), std::string::npos) << t.text;
    }
}

// A ComfyUI node loading its model: the model's size first, not the workflow's (the frame
// nearest the message tells each program's work: wild_message_work_test.cpp).
TEST(WildMessagesRound13, AComfyUiNodeLoadingItsModelIsToldTheModelsSizeFirst) {
    const Told comfy =
        told("952-vibevoice-comfy-from-pretrained-meta-load-allocation-on-device-chained.txt");
    EXPECT_EQ(comfy.e.message.work, Work::LoadingWeights);
    ASSERT_FALSE(comfy.e.tries.empty());
    EXPECT_TRUE(begins(comfy.e.tries[0], "a smaller or quantized model")) << comfy.text;
}

// Two ranks' messages in one log (968: GPU 1's, then GPU 0's): the last is explained, and the
// other is said to be there.
TEST(WildMessagesRound13, AnotherDevicesMessageBeforeTheOneReadIsSaid) {
    const Told t = told("968-xlm-two-ooms-gpu1-then-gpu0-different-figures-bt-step-backward.txt");
    EXPECT_EQ(t.e.message.device_index, 0);
    EXPECT_NE(t.text.find("the text holds another message before this one, of GPU 1 (another "
                          "rank's or process's, most likely): this explains the last, of GPU 0"),
              std::string::npos)
        << t.text;
    const Told one = told("960-ms-swift-dpo-rank1-wrapped-inside-number-4-newline-0-30-gib.txt");
    EXPECT_EQ(one.text.find("another message before this one"), std::string::npos) << one.text;
}

// A tensor too large for a graph's convolution, a distance matrix or a protein's structure is no
// language model's logits (937, 939, 945); a language model's may be.
TEST(WildMessagesRound13, ATensorTooLargeIsALanguageModelsLogitsOnlyInOne) {
    for (const char* file :
         {"937-monet-message-starts-at-tried-to-allocate-backticked-request-3x-total.txt",
          "939-gpnn-torch-zeros-distance-matrix-fp16-request-gt-total-colab.txt",
          "945-fastfold-alphafold-inference-request-77gib-twice-a100-40g-backtick-newline.txt"}) {
        const Told t = told(file);
        EXPECT_EQ(t.e.verdict, OomVerdict::TooLarge) << file;
        EXPECT_EQ(t.text.find("vocabulary"), std::string::npos) << file << ":\n" << t.text;
        EXPECT_NE(t.text.find("split the work that makes it"), std::string::npos) << t.text;
    }
    const Told lm = test::told_text(
        "    logits = self.lm_head(hidden_states)\ntorch.OutOfMemoryError: CUDA out of memory. "
        "Tried to allocate 93.75 GiB. GPU 0 has a total capacity of 79.17 GiB of which 74.14 GiB "
        "is free.");
    EXPECT_EQ(lm.e.verdict, OomVerdict::TooLarge) << lm.text;
    EXPECT_NE(lm.text.find("the loss over the vocabulary in pieces"), std::string::npos) << lm.text;
}

// detectron2's log line after it caught an out-of-memory and ran the call on the CPU is read as
// the failure it is; a process the kernel killed is refused, saying what killed it most often.
TEST(WildMessagesRound13, ACaughtFailureIsReadAndAKilledProcessIsNamedInTheRefusal) {
    const Told caught =
        told("964-detectron2-d2-utils-memory-retry-on-cpu-due-to-cuda-oom-log-line.txt");
    EXPECT_NE(caught.e.summary.find("detectron2 caught it and runs the call again on the CPU"),
              std::string::npos)
        << caught.text;
    const auto refusal = [](const std::string& file) {
        try {
            explain_oom_message(wild_message(file));
        } catch (const BadInput& error) {
            return std::string(error.what());
        }
        return std::string("not refused");
    };
    for (const char* file :
         {"984-notoom-dataloader-worker-killed-by-signal-killed-0x-val-cuda.txt",
          "990-notoom-linux-oom-killer-killed-glued-to-loading-checkpoint-shards-zh.txt",
          "991-notoom-torchrun-exitcode-minus-9-sigterm-ranks-checkpoint-save-ram.txt"}) {
        const std::string said = refusal(file);
        EXPECT_NE(said.find("Linux's out-of-memory killer"), std::string::npos)
            << file << ": " << said;
    }
    const std::string nccl =
        refusal("988-notoom-nccl-watchdog-timeout-glued-to-tqdm-epoch-rank0-rank7.txt");
    EXPECT_NE(nccl.find("no out-of-memory message"), std::string::npos) << nccl;
    EXPECT_EQ(nccl.find("killer"), std::string::npos) << nccl;
}

}  // namespace
}  // namespace oomlab
