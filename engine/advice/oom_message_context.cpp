// What the text around an out-of-memory message tells of the program that printed it
// (oom_message_text.h): the paths in its traceback, the engine whose log it is, what it was
// doing when it failed.
#include <cctype>
#include <functional>
#include <initializer_list>
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

// Putting a model's weights on the device: Module.to's conversion of each parameter, a
// from_pretrained or load_state_dict load, a layer's parameters made there (vLLM 0.1's).
bool loads_weights(std::string_view frames) {
    return holds_any(frames,
                     {"self._apply(convert)", "param_applied = fn(param)", ", in convert",
                      "dtype if t.is_floating_point() or t.is_complex() else None",
                      "set_module_tensor_to_device", "load_state_dict", ", in from_pretrained",
                      ", in load_model\n", ", in load_model\r", "Parameter(torch.empty("});
}

// Inference, by its frames and words, where none of training's is in the text: not a training
// step's backward, optimizer, trainer or fine-tuning ("pretrained" is no training word).
OomMessage::Work inference_of(std::string_view text) {
    using Work = OomMessage::Work;
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
    return holds_any(text,
                     {"inference", "infer_", "infer.py", "predict.py", "whisper", "transcribe",
                      "sentence_transformers", "embedder", "no_grad", "decorate_context"})
               ? Work::Inference
               : Work::Unknown;
}

// What the program was doing: its weights' loading in the frames just before the message (or,
// in a post that quotes the message first and its traceback after, the frames after it), else
// inference or not by the whole text's words. `message` may be a copy, outside `text`.
OomMessage::Work work_of(std::string_view text, std::string_view message) {
    const std::less<const char*> before_in_memory;
    const bool within =
        !before_in_memory(message.data(), text.data()) &&
        !before_in_memory(text.data() + text.size(), message.data() + message.size());
    const std::size_t at = within ? std::size_t(message.data() - text.data()) : 0;
    const std::size_t from = at > kInnermostFrames ? at - kInnermostFrames : 0;
    const std::string_view before = text.substr(from, at - from);
    const bool loading =
        loads_weights(before) || (within && find_in(before, "File \"") == std::string_view::npos &&
                                  loads_weights(text.substr(at + message.size(), kTracebackAfter)));
    return loading ? OomMessage::Work::LoadingWeights : inference_of(text);
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
