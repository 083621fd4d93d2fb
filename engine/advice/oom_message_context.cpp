// What the text around an out-of-memory message tells of the program that printed it
// (oom_message_text.h): the paths in its traceback, the engine whose log it is, what it was
// doing when it failed.
#include <algorithm>
#include <cctype>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "oom_message_text.h"

namespace oomlab::oom_text {
namespace {

bool holds_any(std::string_view text, std::initializer_list<std::string_view> words) {
    for (std::string_view word : words) {
        if (find_in(text, word) != std::string_view::npos) {
            return true;
        }
    }
    return false;
}

// A Windows path: a drive's ("C:\\Users", "D:\\code") or a relative one into PyTorch's sources
// ("..\\c10\\cuda", c10's "(malloc at ...)" of a Windows build).
bool windows_paths(std::string_view text) {
    if (find_in(text, "..\\c10\\") != std::string_view::npos) {
        return true;
    }
    for (std::size_t at = find_in(text, ":\\"); at != std::string_view::npos;
         at = find_in(text, ":\\", at + 1)) {
        const char drive = at > 0 ? text[at - 1] : ' ';
        const bool alone = at < 2 || !std::isalnum(static_cast<unsigned char>(text[at - 2]));
        if (std::isalpha(static_cast<unsigned char>(drive)) && alone) {
            return true;
        }
    }
    return false;
}

// The inference application whose log or traceback this is: its processes' prefixes, its
// package's paths, its memory option, its error report. A training program that imports one (a
// rollout's vLLM) shows its paths only where the failure is the engine's.
std::string inference_app_of(std::string_view text) {
    if (holds_any(text, {"(EngineCore", "VllmWorker", "vllm/engine/", "vllm/v1/", "vllm/worker/",
                         "vllm/model_executor/", "vllm_ascend/", "gpu-memory-utilization",
                         "gpu_memory_utilization", "vllm serve",
                         "Engine loop is not running. Inspect the stacktrace"})) {
        return "vLLM";
    }
    if (holds_any(text, {"sglang", "SGLang", "mem-fraction-static", "mem_fraction_static"})) {
        return "SGLang";
    }
    if (holds_any(text, {"text_generation_launcher", "text_generation_server",
                         "text-generation-inference"})) {
        return "TGI";
    }
    if (holds_any(text, {"ComfyUI", "comfy/model_management.py", "comfy\\model_management.py"})) {
        return "ComfyUI";
    }
    // AUTOMATIC1111's web UI and its forks (Forge keeps the names): its paths and its own
    // words, not its name alone (a link to its issues in another program's report).
    if (holds_any(text, {"stable-diffusion-webui/modules/", "stable-diffusion-webui\\modules\\",
                         "modules/sd_models.py", "modules\\sd_models.py", "webui-user.bat",
                         "Stable diffusion model failed to load"})) {
        return "Stable Diffusion web UI";
    }
    // Accelerate's big-model loading (from_pretrained with a device_map), for inference: its
    // warning where the map left layers on the host.
    if (holds_any(text, {"because they were offloaded to the cpu",
                         "because they were offloaded to the disk"})) {
        return "Accelerate";
    }
    return "";
}

// The number after the first of `options` found ("--gpu-memory-utilization 0.98",
// "gpu_memory_utilization=0.9"); empty where none follows.
std::string option_value(std::string_view text, std::initializer_list<std::string_view> options) {
    const auto digit = [&](std::size_t at) {
        return at < text.size() && std::isdigit(static_cast<unsigned char>(text[at]));
    };
    for (std::string_view option : options) {
        std::size_t at = find_in(text, option);
        if (at == std::string_view::npos) {
            continue;
        }
        at += option.size();
        while (at < text.size() &&
               std::string_view(" =:\"'").find(text[at]) != std::string_view::npos) {
            ++at;
        }
        std::size_t end = at;
        while (digit(end) || (end < text.size() && text[end] == '.')) {
            ++end;
        }
        if (digit(at)) {
            return std::string(text.substr(at, end - at));
        }
    }
    return "";
}

// Where the text shows host memory being pinned when the driver failed; none where the device's
// caching allocator is named failing (0.x's THCCachingAllocator.cpp), pinning or not.
std::string pinning(std::string_view text) {
    if (find_in(text, "THCCachingAllocator.cpp") != std::string_view::npos) {
        return "";
    }
    if (find_in(text, "in pin memory thread") != std::string_view::npos) {
        return "the DataLoader's pin-memory thread (pin_memory=True)";
    }
    if (holds_any(text, {"_utils/pin_memory.py", "_utils\\pin_memory.py"})) {
        return "the DataLoader's pinning of a batch (pin_memory=True)";
    }
    if (find_in(text, "CachingHostAllocator") != std::string_view::npos) {
        return "PyTorch's allocator of pinned host memory (CachingHostAllocator)";
    }
    if (holds_any(text, {"pin_memory=True", ".pin_memory(", "cudaHostAlloc", "cudaMallocHost"})) {
        return "a tensor pinned in host memory (pin_memory)";
    }
    return "";
}

// Whether a line of `text` sets expandable segments for the program: an export, os.environ, or
// the variable before a command; not the hint PyTorch's message gives ("try setting ...").
bool sets_expandable_segments(std::string_view text) {
    for (std::string_view words : {"expandable_segments:True", "expandable_segments:true"}) {
        for (std::size_t at = find_in(text, words); at != std::string_view::npos;
             at = find_in(text, words, at + 1)) {
            const std::size_t newline = text.rfind('\n', at);
            const std::size_t line = newline == std::string_view::npos ? 0 : newline + 1;
            const std::string_view before = text.substr(line, at - line);
            // PyTorch's hint, "try setting PYTORCH_CUDA_ALLOC_CONF=...", wrapped or not.
            const std::size_t near = at < 48 ? 0 : at - 48;
            if (find_in(text.substr(near, at - near), "setting") != std::string_view::npos) {
                continue;
            }
            const std::size_t start = before.find_first_not_of(" \t>$#`");
            const std::string_view head =
                start == std::string_view::npos ? "" : before.substr(start);
            if (find_in(before, "export ") != std::string_view::npos ||
                find_in(before, "os.environ") != std::string_view::npos ||
                find_in(before, "setenv") != std::string_view::npos ||
                head.rfind("PYTORCH_", 0) == 0) {
                return true;
            }
        }
    }
    return false;
}

// The frames just before the message, where Python prints the innermost: what failed.
constexpr std::size_t kInnermostFrames = 1536;
// Where no frame is before it, a traceback posted after the message, as far as this.
constexpr std::size_t kTracebackAfter = 4096;

using Work = OomMessage::Work;

// Frames that tell what the program was doing, each a frame's words or its source line.
struct WorkFrame {
    std::string_view words;
    Work work;
};
constexpr WorkFrame kWorkFrames[] = {
    // A model's weights put on the device: Module.to's and Module.cuda's conversion of each
    // parameter, a from_pretrained or load_state_dict load, a layer's parameters made there
    // (vLLM 0.1's), an engine's weights moved back (verl's and OpenRLHF's "backload").
    {"self._apply(convert)", Work::LoadingWeights},
    {"param_applied = fn(param)", Work::LoadingWeights},
    {", in convert", Work::LoadingWeights},
    {"dtype if t.is_floating_point() or t.is_complex() else None", Work::LoadingWeights},
    {"t.cuda(device)", Work::LoadingWeights},
    {"set_module_tensor_to_device", Work::LoadingWeights},
    {"load_state_dict", Work::LoadingWeights},
    {", in from_pretrained", Work::LoadingWeights},
    {", in load_model\n", Work::LoadingWeights},
    {", in load_model\r", Work::LoadingWeights},
    {"Parameter(torch.empty(", Work::LoadingWeights},
    {"backload", Work::LoadingWeights},
    // The optimizer's step, or its state made (ColossalAI's and DeepSpeed's fp32 copies).
    {"torch/optim/", Work::OptimizerStep},
    {"torch\\optim\\", Work::OptimizerStep},
    {"_multi_tensor_adam", Work::OptimizerStep},
    {"_single_tensor_adam", Work::OptimizerStep},
    {"optimizer.step(", Work::OptimizerStep},
    {"ZeroOptimizer", Work::OptimizerStep},
    {", in setup_optimizer", Work::OptimizerStep},
    // An evaluation, a validation or a test: no backward.
    {", in evaluate", Work::Evaluation},
    {"evaluate_", Work::Evaluation},
    {", in validat", Work::Evaluation},
    {", in test\n", Work::Evaluation},
    {", in test\r", Work::Evaluation},
    {", in test_step", Work::Evaluation},
    {", in predict", Work::Evaluation},
    {"evaluation_loop", Work::Evaluation},
    {"prediction_step", Work::Evaluation},
    {"sliding_window_inference", Work::Evaluation},
    // A pipeline's sampling, within training too (a sample image saved between steps).
    {"num_inference_steps", Work::Diffusion},
    // A training step's forward or backward.
    {"backward", Work::Unknown},
    {"training_step", Work::Unknown},
    {", in train_step", Work::Unknown},
};

// A model put on the device in the program's own line: "model = model.cuda()", "net.to(dev)"
// (a name with "model" or "net" before the call; "inputs.cuda()" is a batch's).
std::size_t model_moved_at(std::string_view frames) {
    std::size_t last = std::string_view::npos;
    for (std::string_view call : {".cuda()", ".to("}) {
        for (std::size_t at = find_in(frames, call); at != std::string_view::npos;
             at = find_in(frames, call, at + 1)) {
            std::size_t begin = at;
            while (begin > 0 && (std::isalnum(static_cast<unsigned char>(frames[begin - 1])) ||
                                 frames[begin - 1] == '_')) {
                --begin;
            }
            std::string name(frames.substr(begin, at - begin));
            std::transform(name.begin(), name.end(), name.begin(), [](char c) {
                return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            });
            if (name.find("model") != std::string::npos || name.find("net") != std::string::npos) {
                last = last == std::string_view::npos ? at : std::max(last, at);
            }
        }
    }
    return last;
}

// What the frame nearest the message among those that tell says it was doing; none where none
// does.
std::optional<Work> work_by_frames(std::string_view frames) {
    std::size_t nearest = std::string_view::npos;
    std::optional<Work> work;
    const auto nearer = [&](std::size_t at, Work told) {
        if (at != std::string_view::npos && (nearest == std::string_view::npos || at > nearest)) {
            nearest = at;
            work = told;
        }
    };
    for (const WorkFrame& frame : kWorkFrames) {
        nearer(frames.rfind(frame.words), frame.work);
    }
    nearer(model_moved_at(frames), Work::LoadingWeights);
    return work;
}

// Inference, by its frames and words, where none of training's is in the text: not a training
// step's backward, optimizer, trainer or fine-tuning ("pretrained" is no training word).
Work inference_of(std::string_view text) {
    if (holds_any(text, {"backward", "optimizer", "/optim/", "\\optim\\", "train.py", "train_",
                         "_train", "training", "trainer", "Trainer", "finetun", "fine-tun",
                         "fine_tun", "lightning", "deepspeed"})) {
        return Work::Unknown;
    }
    if (holds_any(text, {"diffusers/", "diffusers\\", "DiffusionPipeline", "pipe.to(", "pipe("})) {
        return Work::Diffusion;
    }
    if (holds_any(text, {"generation/utils.py", "generation\\utils.py", ", in generate\n",
                         ", in generate\r", ".generate("})) {
        return Work::Generation;
    }
    // Also an inference application's own log lines: text-generation-webui's "Output generated
    // in", ESMFold's; an embedding extraction; a detection toolbox's tools/test.py.
    return holds_any(text, {"inference", "infer_", "infer.py", "predict.py", "whisper",
                            "transcribe", "sentence_transformers", "embedder", "no_grad",
                            "decorate_context", "Output generated in", "esmfold", "ESMFold",
                            "extract", "Extract", "tools/test"})
               ? Work::Inference
               : Work::Unknown;
}

// What the program was doing: its weights' loading in the frames just before the message (or,
// in a post that quotes the message first and its traceback after, the frames after it), else
// inference or not by the whole text's words. `message` may be a copy, outside `text`.
Work work_of(std::string_view text, std::string_view message) {
    const bool within = lies_within(text, message);
    const std::size_t at = within ? std::size_t(message.data() - text.data()) : 0;
    const std::size_t from = at > kInnermostFrames ? at - kInnermostFrames : 0;
    const std::string_view before = text.substr(from, at - from);
    if (const std::optional<Work> told = work_by_frames(before)) {
        return *told;
    }
    // A traceback after the message names the innermost frame last, as nearest wins here.
    if (within && find_in(before, "File \"") == std::string_view::npos) {
        if (const std::optional<Work> after =
                work_by_frames(text.substr(at + message.size(), kTracebackAfter))) {
            return *after;
        }
    }
    return inference_of(text);
}

}  // namespace

void read_context(std::string_view text, std::string_view message, OomMessage& m) {
    m.windows_host = m.windows_host || windows_paths(text);
    // THD, PyTorch's distributed backend until 1.0 ("torch/lib/THD/base/...").
    m.pytorch_0x = m.pytorch_0x || holds_any(text, {"/THD/", "\\THD\\"});
    m.before_settings = m.before_settings || m.pytorch_0x;
    m.inference_app = inference_app_of(text);
    m.vllm_beside = m.inference_app.empty() && holds_any(text, {"vllm", "vLLM", "VLLM"});
    m.work = work_of(text, message);
    m.language_model = holds_any(text, {"logits", "lm_head", "vocab", "CausalLM", "cross_entropy",
                                        "llama", "Llama", "gpt", "GPT"});
    m.app_memory_share =
        m.inference_app == "vLLM"
            ? option_value(text, {"gpu-memory-utilization", "gpu_memory_utilization"})
        : m.inference_app == "SGLang"
            ? option_value(text, {"mem-fraction-static", "mem_fraction_static"})
            : "";
    // SGLang's KV-cache pool, made at start (memory_pool.py, memory_pool_npu.py).
    m.app_pool_at_start = m.inference_app == "SGLang" && holds_any(text, {"memory_pool"});
    m.pinning = m.driver_level || m.pytorch_0x ? pinning(text) : "";
    // Inductor's error before the kernel's message: each configuration it tried was too large.
    m.no_config_fits =
        m.shared_memory && find_in(text, "No valid triton configs") != std::string_view::npos;
    m.kernel_kind = !m.shared_memory                   ? ""
                    : holds_any(text, {"triton_per_"}) ? "persistent reduction"
                    : holds_any(text, {"triton_mm", "TritonTemplateCaller"}) ? "matrix product"
                                                                             : "";
    m.generic_alloc_conf = find_in(text, "PYTORCH_ALLOC_CONF") != std::string_view::npos;
    m.expandable_set = sets_expandable_segments(text);
}

}  // namespace oomlab::oom_text
