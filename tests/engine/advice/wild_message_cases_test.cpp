// The real messages (tests/data/wild/messages) that showed what a reading missed, each with
// what its explanation must say now, and words its figures contradict that it must not.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "oomlab/advice/oom_message.h"
#include "wild_message_text.h"

namespace oomlab {
namespace {

using test::wild_message;

// The messages that showed what a reading missed, each read as its own figures say: the
// verdict, and a phrase of the explanation (summary, facts and tries) that says why.
TEST(WildMessages, EachCaseTheWildShowedIsExplainedAsItsFiguresSay) {
    struct Case {
        const char* file;
        OomVerdict verdict;
        const char* says;
        const char* never = nullptr;  // words the figures contradict
    };
    const Case cases[] = {
        // cudaMallocAsync's own message, read figure by figure
        {"145-asyncalloc-free-gt-request-markdown-bold.txt", OomVerdict::DeviceNotFull,
         "5.00 GiB was free when 12.50 MiB was asked for"},
        {"146-asyncalloc-request-gt-device-limit.txt", OomVerdict::TooLarge,
         "larger than the whole GPU (23.99 GiB)"},
        {"148-asyncalloc-aligned-columns-held-elsewhere.txt", OomVerdict::HeldElsewhere,
         "the cudaMallocAsync pool's cached memory"},
        // this process's own figure splits what is held outside PyTorch
        {"150-2x-three-processes-this-in-middle-free-gt-request.txt", OomVerdict::DeviceNotFull,
         "Other processes held 15.26 GiB of the 23.64 GiB"},
        {"242-torchtune-rank5-this-process-0-bytes-rank2-after.txt", OomVerdict::OutOfMemory,
         "the driver could not see this process"},
        {"240-litgpt-traceback-line-then-21-capacty-frag.txt", OomVerdict::Fragmentation,
         "other processes held at most 15.36 MiB (the printed figures' rounding)"},
        // beyond what freeing could reach; held elsewhere on a small device
        {"275-colab-request-98pct-of-device.txt", OomVerdict::TooLarge,
         "more than this process could have had with every tensor freed"},
        {"210-hip-kernel-commit-quoted-wrapped-72col.txt", OomVerdict::HeldElsewhere,
         "386.00 MiB of HIP memory was held outside PyTorch's allocator"},
        // not the device's memory, or not the allocator's
        {"254-inductor-triton-shared-memory-outofmemoryerror.txt", OomVerdict::TooLarge,
         "Not the GPU's memory"},
        {"157-cudnn-no-valid-algorithm-try-all.txt", OomVerdict::OutOfMemory,
         "Out of memory: most likely, cuDNN found no convolution algorithm"},
        {"156-xpu-level-zero-out-of-resources-timestamped.txt", OomVerdict::OutsideAllocator,
         "xpu-smi"},
        // each backend's and each version's own advice
        {"128-xpu-1024-bytes-pytest-failed-prefix.txt", OomVerdict::DeviceNotFull,
         "UR_L0_ENABLE_RELAXED_ALLOCATION_LIMITS=1"},
        {"263-hip-windows-comfy-sentence-per-line-free-13gib.txt", OomVerdict::DeviceNotFull,
         "AMD_SERIALIZE_KERNEL=3"},
        {"272-npu-stage-log-error-processing-rpc-frag.txt", OomVerdict::Fragmentation,
         "PYTORCH_NPU_ALLOC_CONF=expandable_segments:True"},
        {"216-fairseq-cached-semicolon-skipping-batch.txt", OomVerdict::Fragmentation,
         "a newer PyTorch: 1.10 and later"},
        // less than one of the driver's pages over the segment: full in effect
        {"202-forum-reserved-in-total-question-prose-around.txt", OomVerdict::Fragmentation,
         "1.12 MiB more than the segment of 20.00 MiB the request opens: less than one of the "
         "driver's 2 MiB pages"},
        {"321-json-error-body-other-process-holds-most.txt", OomVerdict::HeldElsewhere,
         "21.69 GiB by other processes", "The device was not full"},
        // round 7: NCCL's own failures, a wrap inside comments, a title cut mid-figure
        {"335-nccl-warn-enqueue-cuda-failure-oom.txt", OomVerdict::OutsideAllocator,
         "a CUDA call of NCCL's ran out of memory"},
        {"353-nccl-cuda-failure-2-oom-interleaved-ranks.txt", OomVerdict::OutsideAllocator,
         "a CUDA call of NCCL's ran out of memory"},
        // round 10: MPS's one-buffer limit, Inductor's log and its failed compile, a title
        // without spaces, serving engines' logs, pinned host memory
        {"594-mps-invalid-buffer-comfy-error-report-gib.txt", OomVerdict::TooLarge,
         "One tensor of 19.38 GiB is larger than the largest buffer Metal allows",
         "a smaller batch, or fewer data-loading workers"},
        {"595-mps-invalid-buffer-inline-prose-50gb.txt", OomVerdict::TooLarge,
         "One tensor of 50.62 GB"},
        {"599-mps-invalid-buffer-title-radeon-pro-450.txt", OomVerdict::TooLarge,
         "PYTORCH_MPS_HIGH_WATERMARK_RATIO does not change this limit"},
        {"559-mps-m1max-72gb-shared-pool-prose-around.txt", OomVerdict::OutOfMemory,
         "15.71 GB other allocations and the 256 bytes asked for make 88.11 GB, past the "
         "81.60 GB",
         "data-loading workers"},
        {"565-inductor-autotune-shared-163840-two-ranks-ci.txt", OomVerdict::TooLarge,
         "(163840 bytes, of 101376 a block has)"},
        {"564-triton-shared-reworded-hardware-limitation-rtx3090.txt", OomVerdict::TooLarge,
         "(163842 bytes, of 101376 a block has)"},
        {"566-inductor-no-valid-triton-configs-h100-327768-split.txt", OomVerdict::TooLarge,
         "persistent_reductions = False", "if the program went on"},
        {"567-inductor-pr-no-valid-triton-configs-triton-mm.txt", OomVerdict::TooLarge,
         "max_autotune_gemm_backends = \"ATEN\"", "persistent_reductions"},
        {"588-thc-no-spaces-title-zh.txt", OomVerdict::OutOfMemory,
         "a newer PyTorch: mixed precision (torch.cuda.amp, 1.6 and later"},
        {"579-npu-sglang-kv-buffer-request-gt-total-resourcewarning.txt", OomVerdict::TooLarge,
         "larger than the whole NPU (60.96 GiB)", "logits"},
        {"579-npu-sglang-kv-buffer-request-gt-total-resourcewarning.txt", OomVerdict::TooLarge,
         "a lower --mem-fraction-static"},
        {"608-2x-pr-indented-elided-vllm-cudagraph-hint-no-class.txt", OomVerdict::OutOfMemory,
         "a lower --gpu-memory-utilization", "activation checkpointing"},
        {"592-hip-vllm-gfx906-log-glued-after-url-cyrillic-path.txt", OomVerdict::Fragmentation,
         "would leave 50.65 MiB of 15.98 GiB after this request: the device is nearly full",
         "pad to a fixed or bucketed"},
        {"585-2x-paren-dashes-8gib-zero-free-asks-how-to-set.txt", OomVerdict::Fragmentation,
         "a smaller batch: activations grow with it"},
        {"610-hip-windows-frag-expandable-unsupported-warning.txt", OomVerdict::Fragmentation,
         "PYTORCH_ALLOC_CONF=max_split_size_mb:128", "PYTORCH_HIP_ALLOC_CONF"},
        {"612-asyncalloc-comfy-truncated-allocation-on-device-only.txt", OomVerdict::OutOfMemory,
         "the cudaMallocAsync backend's message (backend:cudaMallocAsync in "
         "PYTORCH_CUDA_ALLOC_CONF), cut after its first words"},
        {"612-asyncalloc-comfy-truncated-allocation-on-device-only.txt", OomVerdict::OutOfMemory,
         "ComfyUI started with --disable-cuda-malloc", "gradient accumulation"},
        {"610-hip-windows-frag-expandable-unsupported-warning.txt", OomVerdict::Fragmentation,
         "VAE Decode (Tiled)", "pad to a fixed or bucketed"},
        {"601-xpu-no-free-clause-lnl-repl-full.txt", OomVerdict::OutOfMemory,
         "torch.xpu.memory._record_memory_history for yours (on XPU, only in PyTorch's releases "
         "of 2026)"},
        {"444-asyncalloc-rust-panic-escaped-newlines-tgi.txt", OomVerdict::OutOfMemory,
         "a smaller --max-batch-prefill-tokens", "gradient accumulation"},
        {"273-npu2-then-npu-alloc-conf-exports.txt", OomVerdict::Fragmentation,
         "the text sets expandable_segments:True for this run",
         "PYTORCH_NPU_ALLOC_CONF=expandable_segments:True:"},
        {"273-npu2-then-npu-alloc-conf-exports.txt", OomVerdict::Fragmentation,
         "a lower --mem-fraction-static", "activation checkpointing"},
        {"608-2x-pr-indented-elided-vllm-cudagraph-hint-no-class.txt", OomVerdict::OutOfMemory,
         "--gpu-memory-utilization (0.98 in this log)"},
        {"558-mps-gib-wrapped-watermark-already-zero-prose-before.txt", OomVerdict::OutOfMemory,
         "this message printed a limit, so the ratio here was above 0.0"},
        {"259-mps-hf-forum-curly-quoted-other-allocs-dominate.txt", OomVerdict::OutOfMemory,
         "outside PyTorch's allocator (MPSGraph's and other libraries'), which "
         "torch.mps.empty_cache() does not return",
         "PyTorch's MPS cache and Metal's own"},
        {"604-asyncalloc-device5-25gib-missing-poster-set-backend.txt", OomVerdict::OutOfMemory,
         "PyTorch's own allocator (no backend:cudaMallocAsync in PYTORCH_CUDA_ALLOC_CONF)"},
        {"700-pointcept-101-pin-thread-oom.txt", OomVerdict::OutsideAllocator,
         "Out of pinned host memory, most likely", "because the GPU was full"},
        {"701-flexllmgen-47-empty-pin-memory-wsl.txt", OomVerdict::OutsideAllocator,
         "pin_memory=False in the DataLoader"},
        {"702-pytorch-pruning-16-thccachinghostallocator.txt", OomVerdict::OutsideAllocator,
         "PyTorch's allocator of pinned host memory (CachingHostAllocator)"},
        {"710-yolov7-2004-module-to-nonblocking-oom.txt", OomVerdict::OutsideAllocator,
         "because the GPU was full", "pinned"},
        // 0.4's THD in the traceback: no memory fraction yet (1.8); 2.x's run still gets it
        {"440-nccl-2018-warn-no-nccl-prefix-thd-internal-error.txt", OomVerdict::OutsideAllocator,
         "leave room for the libraries: a smaller batch", "set_per_process_memory_fraction"},
        {"353-nccl-cuda-failure-2-oom-interleaved-ranks.txt", OomVerdict::OutsideAllocator,
         "torch.cuda.set_per_process_memory_fraction(0.9) so"},
        {"354-1x-python-comment-wrapped-120col.txt", OomVerdict::DeviceNotFull,
         "PyTorch's tensors held 130.35 MiB; its allocator 188.00 MiB in all"},
        {"354-1x-python-comment-wrapped-120col.txt", OomVerdict::DeviceNotFull,
         "7.70 GiB of the 7.93 GiB was held outside PyTorch's allocator"},
        {"352-title-capacty-gpu2-cut-mid-unit.txt", OomVerdict::OutOfMemory,
         "asked for 1.97 GiB on GPU 2 of 39.43 GiB", "outside PyTorch"},
        // other processes' memory would have made room: said, and what to do first
        {"300-rank0-four-process-lines-alloc-conf-new.txt", OomVerdict::Fragmentation,
         "the 4 processes of 414.00 MiB each are most likely other ranks' contexts"},
        {"300-rank0-four-process-lines-alloc-conf-new.txt", OomVerdict::Fragmentation,
         "the device is nearly full. Yet other processes held 1.62 GiB, more than it lacked."},
        {"349-capacty-five-process-lines-one-is-self-deepspeed.txt", OomVerdict::OutOfMemory,
         "process 62200 is most likely this one"},
        {"349-capacty-five-process-lines-one-is-self-deepspeed.txt", OomVerdict::OutOfMemory,
         "other processes held 1.55 GiB, more than the 42.19 MiB the request lacked"},
        {"348-blockquote-two-other-processes-before-this-h20.txt", OomVerdict::OutOfMemory,
         "other processes held 15.91 GiB, more than the 4.24 GiB the request lacked"},
        {"344-vllm-1x-cuda-visible-devices-other-procs-15g.txt", OomVerdict::OutOfMemory,
         "16.08 GiB was held outside PyTorch's allocator, far more than a context"},
        // what PyTorch's figures are: private pools' free blocks among "allocated"; rounding
        {"304-rank15-gpu7-this-process-0-bytes-private-pools.txt", OomVerdict::Fragmentation,
         "PyTorch's tensors held about 48.10 GiB", "of the tensors' memory"},
        {"307-2x-0-bytes-free-4gib-nwpu.txt", OomVerdict::OutOfMemory,
         "within the printed figures' rounding (10.24 MiB), have been as much as the 38.00 MiB"},
        {"311-windows-allocated-gt-total-backticked-cogview.txt", OomVerdict::OutOfMemory,
         "6.45 GiB past the 8.00 GiB the GPU holds", "held outside PyTorch"},
        // round 8: a listed process that is this one, ranks' contexts, a pool's own cache
        {"411-2x-gpu1-process-line-only-interleaved-traceback.txt", OomVerdict::Fragmentation,
         "process 105400 is most likely this one", "see what else holds the device"},
        {"443-tgi-capacty-process-self-then-router-server-error.txt", OomVerdict::Fragmentation,
         "no other process was listed", "at most 1 bytes"},
        {"442-capacty-fifteen-rank-contexts-1-19gib-backtick.txt", OomVerdict::HeldElsewhere,
         "the 15 processes of 1.19 GiB each are most likely other ranks' contexts"},
        {"444-asyncalloc-rust-panic-escaped-newlines-tgi.txt", OomVerdict::OutOfMemory,
         "torch.cuda.empty_cache() before the step that failed", "without them it would have fit"},
        {"402-1x-max-split-hint-4gib-pct.txt", OomVerdict::Fragmentation,
         "the cache may have been smaller than the request: likely, not certain"},
        // Windows: shared GPU memory, no expandable segments; a PyTorch before 1.10
        {"414-zh-prefix-allocated-75gib-gt-total-24gib.txt", OomVerdict::TooLarge,
         "Windows' driver lends the GPU the host's memory", "no setting of the allocator"},
        // tensors past the whole device: whatever the cache held, the work does not fit
        {"421-2x-windows-allocated-gt-total-chatgpt-fence-cut.txt", OomVerdict::OutOfMemory,
         "the work does not fit this GPU, and the 696.75 MiB its cache held are no way out",
         "expandable_segments:True"},
        {"408-2x-wording-0-bytes-free-ooba-output-generated-after.txt", OomVerdict::Fragmentation,
         "expandable segments are not available on Windows", "expandable_segments:True"},
        {"456-1x-malloc-at-cachingallocator-289-no-backtrace.txt", OomVerdict::Fragmentation,
         "a newer PyTorch: 1.10 and later", "expandable"},
        // each backend its own module and settings
        {"453-xpu-ipex-comfy-exception-prefix-cache-2gib.txt", OomVerdict::Fragmentation,
         "keep tensor sizes steady", "PYTORCH_CUDA_ALLOC_CONF"},
        {"431-directml-could-not-allocate-tensor-total-time-after.txt",
         OomVerdict::OutsideAllocator, "none of PyTorch's allocator settings apply"},
        {"423-npu-backticked-sdpa-35gib-request-free-33gib.txt", OomVerdict::OutOfMemory,
         "torch.npu.memory._record_memory_history"},
        {"454-xpu-ur-out-of-resources-sdpa.txt", OomVerdict::OutsideAllocator,
         "torch.xpu.set_per_process_memory_fraction", "torch.cuda"},
        // round 9: 0.x's TH, a listed process that holds all in use, ROCm's own variable
        {"521-th-cpu-buy-new-ram-72gb-title.txt", OomVerdict::OutOfMemory,
         "asked the host for 72GB (77309411328 bytes)"},
        {"543-vllm-two-workers-private-pools-process-self.txt", OomVerdict::OutOfMemory,
         "process 133267 is most likely this one", "other processes held"},
        {"545-vllm-enginecore-h100-gpt-oss-process-self-660mib-pools.txt", OomVerdict::OutOfMemory,
         "9.81 GiB more, far more than a context"},
        {"500-hip-comfy-exception-prefix-unalloc-7gib-gt-request.txt", OomVerdict::Fragmentation,
         "PYTORCH_HIP_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF"},
        {"529-npu-torch-npu-memory-error-log-prefix-free-gt-request.txt", OomVerdict::DeviceNotFull,
         "npu-smi", "Windows"},
        {"541-triton-shared-memory-freetoken-log-lines.txt", OomVerdict::TooLarge,
         "or a library's own"},
        {"547-xpu-ipex-title-4gib-request-no-free-cut.txt", OomVerdict::OutOfMemory,
         "Intel's GPUs allocate at most 4 GiB at once"},
        {"509-thc-tensorrandom-title-only.txt", OomVerdict::OutOfMemory,
         "the GPU was most likely full before this program put anything on it", "bf16"},
        {"511-thc-tensorrandom-model-to-device-traceback.txt", OomVerdict::OutOfMemory,
         "a newer PyTorch: mixed precision (torch.cuda.amp, 1.6 and later",
         "_record_memory_history for yours"},
        // each setting from the release that brought it, on its backend
        {"308-cached-it-clearly-shows-prose.txt", OomVerdict::Fragmentation,
         "2.1 and later expandable_segments:True", "2.0 and later"},
        {"351-blockquoted-deepspeed-launcher-wsl-reserved-unalloc.txt", OomVerdict::Fragmentation,
         "max_split_size_mb:128 (PyTorch 1.10 and later; this message's wording is 2.0's or older)",
         "1.13"},
        {"333-hip-capacty-apu-512mib-free-underflow.txt", OomVerdict::Fragmentation,
         "expandable_segments:True (ROCm builds of PyTorch 2.11 and later"},
        {"259-mps-hf-forum-curly-quoted-other-allocs-dominate.txt", OomVerdict::OutOfMemory,
         "other allocations held 43.49 GiB of the 47.74 GiB"},
        {"270-cpu-extend-prefix-and-bare-line.txt", OomVerdict::OutOfMemory, "a larger page file"},
        // round 11: a later mention does not replace the message; small and unsplit holders
        {"802-1x-backtick-unclosed-request-gt-free.txt", OomVerdict::OutOfMemory,
         "the tensors alive held 18.60 GiB, and the next 7.74 GiB"},
        {"841-2x1-capacty-frag-inference-two-24g-followup.txt", OomVerdict::Fragmentation,
         "4.08 GiB cached but free"},
        {"826-2x9-ci-four-processes-pytest-failed-twice.txt", OomVerdict::Fragmentation,
         "Yet other processes held 6.30 GiB, more than it lacked."},
        {"839-xinference-vllm-async-engine-private-pools-callback-elided.txt",
         OomVerdict::Fragmentation, "(a desktop's or a monitor's size)", "Yet other processes"},
        {"813-hip-repr-engine-loop-private-pools-hip-graphs-roo.txt", OomVerdict::Fragmentation,
         "the message does not tell them apart", "far more than a context"},
        {"837-xpu-4gb-block-limit-bare-quoted-fooocus-upscale.txt", OomVerdict::TooLarge,
         "(the message gives no size)", "gradient accumulation"},
        {"837-xpu-4gb-block-limit-bare-quoted-fooocus-upscale.txt", OomVerdict::TooLarge,
         "UR_L0_ENABLE_RELAXED_ALLOCATION_LIMITS=1", "--medvram"},  // a link to the web UI's issue
        {"819-a1111-2x0-model-failed-to-load-press-any-key-2gib.txt", OomVerdict::Fragmentation,
         "--medvram", "gradient accumulation"},
        {"811-cudnn-alloc-failed-bare-title-benchmark-fix.txt", OomVerdict::OutsideAllocator,
         "torch.backends.cudnn.benchmark = False"},  // what fixed it for its poster
        {"840-program-truncated-str-e-gpu-space-meta-offload.txt", OomVerdict::OutOfMemory,
         "max_memory in from_pretrained", "gradient accumulation"},
    };
    for (const Case& c : cases) {
        const std::string message = wild_message(c.file);
        ASSERT_FALSE(message.empty()) << c.file << ": no such file in tests/data/wild/messages";
        const OomExplanation e = explain_oom_message(message);
        const std::string text = test::explanation_text(e);
        EXPECT_EQ(e.verdict, c.verdict) << c.file << ": " << e.summary;
        EXPECT_NE(text.find(c.says), std::string::npos) << c.file << ":\n" << text;
        if (c.never) {
            EXPECT_EQ(text.find(c.never), std::string::npos) << c.file << ":\n" << text;
        }
    }
}

// vLLM on a device nearly full (592: 50.65 MiB would be left of 15.98 GiB, the cache joined):
// what makes vLLM take less comes first; with room left (593), the allocator's setting does.
TEST(WildMessages, AnInferenceAppOnADeviceNearlyFullIsToldItsOptionsFirst) {
    const OomExplanation full = explain_oom_message(
        wild_message("592-hip-vllm-gfx906-log-glued-after-url-cyrillic-path.txt"));
    ASSERT_FALSE(full.tries.empty());
    EXPECT_EQ(full.tries[0].rfind("a lower --gpu-memory-utilization", 0), 0u) << full.tries[0];
    const OomExplanation roomy =
        explain_oom_message(wild_message("593-hip-enginecore-strix-halo-frag-cuda-conf-tail.txt"));
    ASSERT_FALSE(roomy.tries.empty());
    EXPECT_EQ(roomy.tries[0].rfind("PYTORCH_HIP_ALLOC_CONF=", 0), 0u) << roomy.tries[0];
}

// A driver's failure in an inference application's log (832: vLLM capturing its CUDA graphs;
// 834: SGLang) is changed by the application's options first, not by the devices each rank
// picks; and a device nearly full of what the web UI (819) or vLLM (813) took, by their own.
TEST(WildMessages, AnInferenceAppsOptionsComeFirstWhereTheDeviceWasFullOfIt) {
    const std::pair<const char*, const char*> firsts[] = {
        {"832-vllm-driver-oom-capture-end-cuda-graph-worker-rank3.txt",
         "a lower --gpu-memory-utilization"},
        {"834-sglang-driver-oom-set-stream-overlap-thread-a100.txt",
         "a lower --mem-fraction-static"},
        {"819-a1111-2x0-model-failed-to-load-press-any-key-2gib.txt", "--medvram"},
        // vLLM told by its engine loop's words alone, on a device full of what it took
        {"813-hip-repr-engine-loop-private-pools-hip-graphs-roo.txt",
         "a lower --gpu-memory-utilization"},
    };
    for (const auto& [file, first] : firsts) {
        const OomExplanation e = explain_oom_message(wild_message(file));
        ASSERT_FALSE(e.tries.empty()) << file;
        EXPECT_EQ(e.tries[0].rfind(first, 0), 0u) << file << ": " << e.tries[0];
    }
}

// A message cut before its last figures still tells its release by its words: 2.x's "Tried to
// allocate 600.00 MiB. GPU" (591), 2.x's "has a total capacity of" without its class (608).
TEST(WildMessages, AMessageCutShortIsStillReadAsItsRelease) {
    for (const char* file : {"591-2x-cut-after-gpu-ja-followup.txt",
                             "608-2x-pr-indented-elided-vllm-cudagraph-hint-no-class.txt"}) {
        EXPECT_EQ(explain_oom_message(wild_message(file)).message.pytorch_major, 2) << file;
    }
}

}  // namespace
}  // namespace oomlab
