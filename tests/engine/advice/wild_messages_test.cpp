// The out-of-memory messages that other people's programs printed, as they were posted
// (tests/data/wild/messages, one a file; PROVENANCE.tsv says where each came from): every one is
// read, each figure equals what a person reads in it (EXPECTED.tsv, the figures as printed,
// converted here on their own), and the verdict never contradicts them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "oomlab/advice/oom_message.h"
#include "oomlab/common/errors.h"
#include "test_support.h"

namespace oomlab {
namespace {

using Row = std::map<std::string, std::string>;

std::vector<Row> expected_rows() {
    std::ifstream file(test::fixture("wild/messages/EXPECTED.tsv"));
    std::vector<std::string> columns;
    std::vector<Row> rows;
    for (std::string line; std::getline(file, line);) {
        std::vector<std::string> cells;
        std::stringstream split(line);
        for (std::string cell; std::getline(split, cell, '\t');) {
            cells.push_back(cell);
        }
        if (columns.empty()) {
            columns = cells;
            continue;
        }
        Row row;
        for (std::size_t i = 0; i < columns.size(); ++i) {
            row[columns[i]] = i < cells.size() ? cells[i] : "-";
        }
        rows.push_back(row);
    }
    return rows;
}

// "12.50 MiB", "256 bytes", "1024.00 MB" (MPS counts a GB as 1024 MB) as bytes.
std::optional<double> printed_bytes(const std::string& figure) {
    static const std::map<std::string, double> kUnits = {
        {"bytes", 1},       {"B", 1},          {"KiB", 1024.0},       {"KB", 1024.0},
        {"MiB", 1048576.0}, {"MB", 1048576.0}, {"GiB", 1073741824.0}, {"GB", 1073741824.0}};
    std::stringstream in(figure);
    double number = 0;
    std::string unit;
    if (!(in >> number >> unit) || !kUnits.count(unit)) {
        return std::nullopt;
    }
    return number * kUnits.at(unit);
}

constexpr double kOneEiB = 1152921504606846976.0;

// The figure the row gives in `column`, as the reader must hold it: nothing for "-", nothing
// (and set aside) past 1 EiB.
void expect_figure(const Row& row, const std::string& column,
                   const std::optional<std::int64_t>& read, const OomMessage& message) {
    const std::string& printed = row.at(column);
    const std::string where = row.at("file") + " " + column + " \"" + printed + "\"";
    const std::optional<double> bytes = printed_bytes(printed);
    if (printed == "-" || !bytes) {
        EXPECT_FALSE(read) << where << ": read " << *read;
        return;
    }
    if (*bytes > kOneEiB) {
        EXPECT_FALSE(read) << where;
        EXPECT_FALSE(message.set_aside.empty()) << where << ": an impossible figure is said so";
        return;
    }
    ASSERT_TRUE(read) << where;
    EXPECT_EQ(*read, std::llround(*bytes)) << where;
}

std::optional<std::int64_t> sum(const std::optional<std::int64_t>& a, const std::string& b) {
    const std::optional<double> more = printed_bytes(b);
    return a && more ? std::optional<std::int64_t>(*a + std::llround(*more)) : std::nullopt;
}

std::string read_message(const std::string& file) {
    return test::read_text(test::fixture("wild/messages/" + file));
}

TEST(WildMessages, EveryMessageIsReadFigureByFigure) {
    const std::vector<Row> rows = expected_rows();
    ASSERT_GE(rows.size(), 40u);
    for (const Row& row : rows) {
        const std::string text = read_message(row.at("file"));
        ASSERT_FALSE(text.empty()) << row.at("file");
        OomExplanation e;
        try {
            e = explain_oom_message(text);
        } catch (const BadInput& refusal) {
            ADD_FAILURE() << row.at("file") << " refused: " << refusal.what();
            continue;
        }
        const OomMessage& m = e.message;
        const std::string& device = row.at("device");
        const std::string where = row.at("file");
        if (device == "mps" || device == "cpu") {
            EXPECT_EQ(m.device, device == "mps" ? OomMessage::Device::Mps : OomMessage::Device::Cpu)
                << where;
        } else {
            EXPECT_EQ(m.device, OomMessage::Device::Cuda) << where;
            std::string backend = m.backend;  // "CUDA", "HIP", ... "DirectML"
            std::transform(backend.begin(), backend.end(), backend.begin(), ::tolower);
            EXPECT_EQ(backend, device) << where;
        }
        EXPECT_EQ(m.device_index, row.at("gpu_index") == "-" ? -1 : std::stoi(row.at("gpu_index")))
            << where;
        expect_figure(row, "requested", m.requested, m);
        expect_figure(row, "total", m.total, m);
        expect_figure(row, "free", m.free, m);
        expect_figure(row, "allocated", m.allocated, m);
        expect_figure(row, "allowed", m.allowed, m);
        if (device == "mps" && row.at("this_process") != "-") {  // "other allocations", beside
            const std::string other = row.at("this_process").substr(6);  // what MPS allocated
            EXPECT_EQ(m.this_process, sum(m.allocated, other)) << where;
        } else {
            expect_figure(row, "this_process", m.this_process, m);
        }
        if (row.at("reserved_total") != "-") {
            expect_figure(row, "reserved_total", m.reserved, m);
        } else if (row.at("reserved_unallocated") != "-") {
            EXPECT_EQ(m.reserved, sum(m.allocated, row.at("reserved_unallocated"))) << where;
        }
        std::string processes;
        for (const auto& [pid, held] : m.processes) {
            processes += (processes.empty() ? "" : ",") + std::to_string(pid);
        }
        std::string expected_processes;
        std::stringstream listed(row.at("processes") == "-" ? "" : row.at("processes"));
        for (std::string item; std::getline(listed, item, ',');) {
            const std::optional<double> held = printed_bytes(item.substr(item.find(':') + 1));
            if (held && *held > kOneEiB) {
                continue;  // set aside, as any impossible figure
            }
            expected_processes +=
                (expected_processes.empty() ? "" : ",") + item.substr(0, item.find(':'));
        }
        EXPECT_EQ(processes, expected_processes) << where;
    }
}

// The errors kept beside them that are no out-of-memory (PROVENANCE.tsv lists them, EXPECTED.tsv
// does not): a failure in the DataLoader's pin-memory thread that was an invalid argument, an
// internal assert of the cudaMallocAsync backend. Each is refused, not explained as memory.
TEST(WildMessages, AnErrorThatIsNoOutOfMemoryIsRefused) {
    std::set<std::string> read;
    for (const Row& row : expected_rows()) {
        read.insert(row.at("file"));
    }
    std::ifstream provenance(test::fixture("wild/messages/PROVENANCE.tsv"));
    int refused = 0;
    for (std::string line; std::getline(provenance, line);) {
        const std::string file = line.substr(0, line.find('\t'));
        if (file == "file" || read.count(file)) {
            continue;
        }
        EXPECT_THROW(explain_oom_message(read_message(file)), BadInput) << file;
        ++refused;
    }
    EXPECT_GE(refused, 3);
}

// A person checks the explanation against the message: each figure the message printed is
// quoted as printed ("1.12 MiB", not "1.1 MiB"; MPS's "GB" as MPS prints it; the CPU's bytes),
// this process's own figure and MPS's other allocations included.
TEST(WildMessages, TheFactsQuoteTheMessagesFiguresAsPrinted) {
    int quoted = 0;
    for (const Row& row : expected_rows()) {
        const OomExplanation e = explain_oom_message(read_message(row.at("file")));
        std::string facts;
        for (const std::string& fact : e.facts) {
            facts += fact + "\n";
        }
        for (const char* column :
             {"requested", "total", "free", "allocated", "allowed", "this_process"}) {
            std::string printed = row.at(column);
            if (row.at("device") == "mps" && printed.rfind("other:", 0) == 0) {
                printed = printed.substr(6);  // MPS's "other allocations"
            }
            const std::optional<double> bytes = printed_bytes(printed);
            if (printed == "-" || !bytes || *bytes > kOneEiB) {
                continue;
            }
            EXPECT_NE(facts.find(printed), std::string::npos)
                << row.at("file") << " " << column << " \"" << printed << "\" not in:\n"
                << facts;
            ++quoted;
        }
    }
    EXPECT_GT(quoted, 500);
}

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
         "Out of memory, most likely: cuDNN found no convolution algorithm"},
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
        {"300-rank0-four-process-lines-alloc-conf-new.txt", OomVerdict::OutOfMemory,
         "the 4 processes of 414.00 MiB each are most likely other ranks' contexts"},
        {"300-rank0-four-process-lines-alloc-conf-new.txt", OomVerdict::OutOfMemory,
         "did not fit in what was left. Yet other processes held 1.62 GiB, more than it lacked."},
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
        {"311-windows-allocated-gt-total-backticked-cogview.txt", OomVerdict::Fragmentation,
         "shared GPU memory", "held outside PyTorch"},
        // round 8: a listed process that is this one, ranks' contexts, a pool's own cache
        {"411-2x-gpu1-process-line-only-interleaved-traceback.txt", OomVerdict::OutOfMemory,
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
        {"421-2x-windows-allocated-gt-total-chatgpt-fence-cut.txt", OomVerdict::Fragmentation,
         "expandable segments are not available on Windows", "expandable_segments:True"},
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
    };
    for (const Case& c : cases) {
        const OomExplanation e = explain_oom_message(read_message(c.file));
        std::string text = e.summary + "\n";
        for (const auto* list : {&e.facts, &e.tries}) {
            for (const std::string& line : *list) {
                text += line + "\n";
            }
        }
        EXPECT_EQ(e.verdict, c.verdict) << c.file << ": " << e.summary;
        EXPECT_NE(text.find(c.says), std::string::npos) << c.file << ":\n" << text;
        if (c.never) {
            EXPECT_EQ(text.find(c.never), std::string::npos) << c.file << ":\n" << text;
        }
    }
}

// The segment PyTorch's caching allocator opens for a request (2 MiB up to 1 MiB, 20 MiB below
// 10 MiB, else the request rounded up to 2 MiB): what "free" must hold for it to fit.
std::int64_t segment_for(std::int64_t requested) {
    using test::kMiB;
    return requested <= kMiB       ? 2 * kMiB
           : requested < 10 * kMiB ? 20 * kMiB
                                   : (requested + 2 * kMiB - 1) / (2 * kMiB) * (2 * kMiB);
}

TEST(WildMessages, NoVerdictContradictsTheMessagesOwnFigures) {
    std::map<OomVerdict, int> verdicts;
    for (const Row& row : expected_rows()) {
        const OomExplanation e = explain_oom_message(read_message(row.at("file")));
        const OomMessage& m = e.message;
        const std::string why = row.at("file") + ": " + e.summary;
        ++verdicts[e.verdict];
        EXPECT_FALSE(e.summary.empty()) << row.at("file");
        EXPECT_FALSE(e.tries.empty()) << why;
        const bool too_large = m.requested && (m.total ? *m.requested > *m.total : false);
        if (too_large) {
            EXPECT_EQ(e.verdict, OomVerdict::TooLarge) << why;
            continue;
        }
        // The device had the request's segment free, and a driver's 2 MiB page more: neither
        // fragmentation nor others' memory nor plain lack of memory explains the failure.
        if (m.requested && m.free && *m.free >= segment_for(*m.requested) + 2 * kMiB) {
            EXPECT_TRUE(e.verdict == OomVerdict::DeviceNotFull ||
                        e.verdict == OomVerdict::LimitReached)
                << why;
        }
        // A limit the process reached leads as the limit, where it is less than the device
        // (a memory fraction of 1.0 allows all of it: the device is the limit).
        if (m.allowed && m.requested && m.reserved && (!m.total || *m.allowed < *m.total) &&
            *m.reserved + segment_for(*m.requested) > *m.allowed) {
            EXPECT_EQ(e.verdict, OomVerdict::LimitReached) << why;
        }
        if (m.driver_level) {
            EXPECT_EQ(e.verdict, OomVerdict::OutsideAllocator) << why;
        }
        if (e.verdict == OomVerdict::Fragmentation) {
            EXPECT_TRUE(m.requested && m.reserved && m.allocated &&
                        *m.reserved - *m.allocated >= *m.requested)
                << why << ": the cached memory would not have held the request";
        }
    }
    // The corpus holds every kind of failure.
    for (const OomVerdict verdict :
         {OomVerdict::Fragmentation, OomVerdict::TooLarge, OomVerdict::OutOfMemory,
          OomVerdict::LimitReached, OomVerdict::DeviceNotFull, OomVerdict::OutsideAllocator}) {
        EXPECT_GT(verdicts[verdict], 0) << oom_verdict_name(verdict);
    }
}

}  // namespace
}  // namespace oomlab
