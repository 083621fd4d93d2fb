// What the real messages' programs were doing when they failed (tests/data/wild/messages,
// rounds 12 and 13): putting a model's weights on the device, inference, an evaluation, the
// optimizer's step, told by the frames and words around the message, each with what it must be
// told now and a training step's advice it must not be.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>

#include "oomlab/advice/oom_message.h"
#include "wild_message_text.h"

namespace oomlab {
namespace {

using test::Told;
using test::told;
using test::told_text;

using Work = OomMessage::Work;

TEST(WildMessageWork, EachProgramIsToldWhatChangesItsOwnWork) {
    struct Case {
        const char* file;
        Work work;
        const char* first_try;  // how the first try begins
        const char* never;      // a try its frames contradict
    };
    const Case cases[] = {
        // The weights did not fit: diffusers' pipe.to, whisper.load_model's Module.to.
        {"918-flux2-diffusers-pipe-to-a6000-48g-this-process-holds-all.txt", Work::LoadingWeights,
         "the weights in fewer bytes", "gradient accumulation"},
        {"929-whisper-realtime-load-model-1x-windows-8gib-cut-in-reserved.txt",
         Work::LoadingWeights, "the weights in fewer bytes", "grad scaler"},
        // Inference: an inference script, a diffusers pipeline's attention, an embedder.
        {"914-open-sora-t4-inference-process-line-url-no-closing-paren.txt", Work::Inference,
         "fewer or smaller inputs at once", "activation checkpointing"},
        {"919-regional-flux-this-process-0-bytes-inference-24g.txt", Work::Inference,
         "fewer or smaller inputs at once", "grad scaler"},
        {"924-dcr-diffusers-attention-softmax-1x-request-gt-free-inference.txt", Work::Diffusion,
         "a smaller image, fewer frames", "activation checkpointing"},
        {"906-bio-embeddings-logger-prefix-suffix-batch-size-gpu1.txt", Work::Inference,
         "see what else holds the device", "gradient accumulation"},
        // A training step's backward keeps a training step's advice.
        {"900-parlai-rank3-critical-logger-t5-11b-fp16-backward.txt", Work::Unknown,
         "a smaller batch", "inference_mode"},
        // Round 13: the frame nearest the message tells.
        // Adam's foreach step; ColossalAI making its fp32 copy of the weights for the optimizer.
        {"969-attentionlens-error-prefix-glued-to-file-line-adam-foreach-sqrt-optimizer-step.txt",
         Work::OptimizerStep, "an optimizer that keeps less", "activation checkpointing"},
        {"950-colossalai-lowlevelzero-fp32-flat-copy-25gib-rich-log-cut-at-gpu0.txt",
         Work::OptimizerStep, "an optimizer that keeps less", "activation checkpointing"},
        // MONAI's sliding window in an evaluation; an evaluation inside a training script.
        {"936-monai-clip-universal-sliding-window-flattened-indent-no-grad-tried.txt",
         Work::Evaluation, "fewer or smaller inputs per evaluation step", "grad scaler"},
        // vLLM's weights moved back onto the GPU (a "backload"), model_func.cuda().
        {"955-open-reasoner-zero-ray-task-error-outofmemoryerror-backload-vllm-zh-cut.txt",
         Work::LoadingWeights, "the weights in fewer bytes", "gradient accumulation"},
        {"938-text-gcn-numbered-chinese-list-model-cuda-cut-after-allocated.txt",
         Work::LoadingWeights, "that tensor is the model's own", "a smaller batch"},
        // A sample image made between training steps: the traceback after the message names it.
        {"943-dreambooth-ext-exception-saving-sample-pipeline-inside-training-12g.txt",
         Work::Diffusion, "a smaller image", "activation checkpointing"},
        // Inference told by the log: text-generation-webui's "Output generated in", ESMFold's.
        {"961-textgen-api-gptq-pre-layer-output-generated-0-tokens-after-message.txt",
         Work::Inference, "fewer or smaller inputs at once", "grad scaler"},
        {"947-esmfold-logger-failed-cuda-out-of-memory-on-sequence-no-figures.txt", Work::Inference,
         "fewer or smaller inputs at once", "grad scaler"},
        // A training step's backward stays one.
        {"960-ms-swift-dpo-rank1-wrapped-inside-number-4-newline-0-30-gib.txt", Work::Unknown,
         "a smaller batch", "inference_mode"},
    };
    for (const Case& c : cases) {
        const Told t = told(c.file);
        EXPECT_EQ(t.e.message.work, c.work) << c.file;
        ASSERT_FALSE(t.e.tries.empty()) << c.file;
        EXPECT_EQ(t.e.tries[0].rfind(c.first_try, 0), 0u) << c.file << ":\n" << t.text;
        EXPECT_EQ(t.tries.find(c.never), std::string::npos) << c.file << ":\n" << t.text;
    }
}

// vLLM 0.1 building Llama-2-70B's layers on one 80 GB GPU (927): the weights alone (some 130
// GiB in fp16) do not fit, before any KV cache or CUDA graph; more devices or a quantized
// model come first, not the cache's options.
TEST(WildMessageWork, VllmBuildingAModelTooLargeIsToldToSpreadOrShrinkItsWeights) {
    const Told t = told("927-vllm-0-1-llama2-70b-parameter-empty-1x-80g-cut-at-memor.txt");
    EXPECT_EQ(t.e.message.inference_app, "vLLM");
    EXPECT_EQ(t.e.message.work, Work::LoadingWeights);
    ASSERT_FALSE(t.e.tries.empty());
    EXPECT_EQ(t.e.tries[0].rfind("a larger --tensor-parallel-size", 0), 0u) << t.text;
    EXPECT_EQ(t.text.find("--enforce-eager"), std::string::npos) << t.text;
    EXPECT_EQ(t.text.find("--gpu-memory-utilization"), std::string::npos) << t.text;
}

// SkyRL's FSDP2 policy beside its vLLM engine on one GPU (907): the other process holding 18.46
// GiB is the engine, colocated by design; its own setting, or its sleep, is what frees room.
TEST(WildMessageWork, AVllmEngineBesideTrainingIsNamedAsTheOtherProcess) {
    const Told t = told("907-skyrl-fsdp2-colocated-vllm-process-line-pytest-failed-ray.txt");
    EXPECT_EQ(t.e.verdict, OomVerdict::HeldElsewhere) << t.text;
    EXPECT_TRUE(t.e.message.inference_app.empty());
    ASSERT_GE(t.e.tries.size(), 2u);
    EXPECT_EQ(t.e.tries[1].rfind("if the other process is the vLLM engine beside training", 0), 0u)
        << t.text;
    EXPECT_NE(t.tries.find("llm.sleep()"), std::string::npos) << t.text;
}

// Windows lends the GPU the host's memory: whisper's tensors held 6.50 GiB of a 4.00 GiB card
// (908). The 333.05 MiB its cache held is no way out: the work does not fit this GPU.
TEST(WildMessageWork, TensorsPastTheWholeDeviceAreNoFragmentation) {
    const Told t = told("908-labelmakr-whisper-allocated-exceeds-4gib-total.txt");
    EXPECT_EQ(t.e.verdict, OomVerdict::OutOfMemory) << t.text;
    EXPECT_NE(t.e.summary.find("The tensors alone were 2.50 GiB past the 4.00 GiB the GPU holds"),
              std::string::npos)
        << t.text;
    EXPECT_NE(t.e.summary.find("the 333.05 MiB its cache held are no way out"), std::string::npos)
        << t.text;
    EXPECT_EQ(t.text.find("max_split_size_mb"), std::string::npos) << t.text;
}

// whisper.load_model on an 8 GB Windows card (929), the post stored cut inside the last label
// ("6.83 GiB rese"): the reserved figure is still read, the cache's 337.92 MiB makes it
// fragmentation, and the weights still to come are what to shrink: no steps to keep steady.
TEST(WildMessageWork, AModelLoadInPiecesIsToldItsWeightsAndAPostCutInALabelKeepsItsFigure) {
    const Told t = told("929-whisper-realtime-load-model-1x-windows-8gib-cut-in-reserved.txt");
    ASSERT_TRUE(t.e.message.reserved.has_value());
    EXPECT_EQ(*t.e.message.reserved, std::llround(6.83 * (1LL << 30)));
    EXPECT_EQ(t.e.verdict, OomVerdict::Fragmentation) << t.text;
    EXPECT_NE(t.text.find("1.17 GiB of CUDA memory was held outside PyTorch's allocator"),
              std::string::npos)
        << t.text;
    EXPECT_NE(t.tries.find("the weights in fewer bytes"), std::string::npos) << t.text;
    EXPECT_EQ(t.tries.find("from step to step"), std::string::npos) << t.text;
    // Cut before any of the label's words can tell it, a figure is not taken.
    const Told bare = told_text(
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 26.00 MiB (GPU 0; "
        "8.00 GiB total capacity; 6.50 GiB already allocated; 0 bytes free; 6.83 GiB re");
    EXPECT_FALSE(bare.e.message.reserved.has_value());
}

// A log that kept PyTorch's hint after a driver's failure and lost the failure's own line
// (SD.Next's, 931): the runtime's name for the error, hipErrorOutOfMemory, is read as it.
TEST(WildMessageWork, TheRuntimesNameForTheErrorInPyTorchsHintIsTheDriversFailure) {
    const Told t = told("931-sdnext-rich-log-hip-error-tail-only-hiperroroutofmemory-padded.txt");
    EXPECT_EQ(t.e.verdict, OomVerdict::OutsideAllocator) << t.text;
    EXPECT_TRUE(t.e.message.driver_level);
    EXPECT_EQ(t.e.message.backend, "HIP");
    const Told cuda = told_text(
        "RuntimeError: CUDA error\nSearch for `cudaErrorMemoryAllocation' in "
        "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for more "
        "information.\n");
    EXPECT_EQ(cuda.e.verdict, OomVerdict::OutsideAllocator);
    EXPECT_EQ(cuda.e.message.backend, "CUDA");
}

}  // namespace
}  // namespace oomlab
