// An inference application's out-of-memory (oom_explain.h): vLLM and SGLang set their memory
// aside at start, by their options, for the weights, the KV cache, CUDA graphs and the
// activations of the largest batch they profile (TGI warms up with its largest); ComfyUI loads
// and offloads models by its own rules.
// A training loop's batch, precision and checkpointing do not reach them.
#include <algorithm>

#include "oom_explain.h"

namespace oomlab::oom_explain {
namespace {

// "--gpu-memory-utilization (0.9 by default)", or the share the log sets.
std::string share(const OomMessage& m, const std::string& option, const std::string& fallback) {
    return option + (m.app_memory_share.empty() ? " (" + fallback + ")"
                                                : " (" + m.app_memory_share + " in this log)");
}

void vllm_tries(OomExplanation& e) {
    const OomMessage& m = e.message;
    e.facts.push_back("the log is vLLM's: it takes " +
                      share(m, "--gpu-memory-utilization", "0.9 by default") +
                      " of the device for the weights, the KV cache and the activations of the "
                      "largest batch it profiles; CUDA graphs' capture and other processes need "
                      "room beside it");
    e.tries.push_back(
        "a lower --gpu-memory-utilization: what vLLM does not take is what its CUDA graphs, "
        "sampler and other processes have");
    e.tries.push_back(
        "a shorter --max-model-len, fewer --max-num-seqs or --max-num-batched-tokens: the "
        "largest batch's activations and each sequence's KV cache shrink");
    e.tries.push_back("--enforce-eager: no CUDA graphs, whose capture holds memory of its own");
    e.tries.push_back(
        "where there are more devices, a larger --tensor-parallel-size; or a quantized model: "
        "the weights and the cache spread over more devices, or take less");
}

void sglang_tries(OomExplanation& e) {
    const OomMessage& m = e.message;
    if (m.app_pool_at_start) {  // the pool itself did not fit
        e.facts.push_back(
            "the log is SGLang's, and it failed making its KV-cache pool at start: "
            "the pool it sized from " +
            share(m, "--mem-fraction-static", "its default for this device") +
            " was more than the device had");
        e.tries.push_back(
            "a lower --mem-fraction-static, or --max-total-tokens: the KV-cache pool is made "
            "that much smaller");
        e.tries.push_back(
            "where there are more devices, a larger --tp-size; or a quantized model: the weights "
            "leave the pool more");
        return;
    }
    e.facts.push_back("the log is SGLang's: it takes " +
                      share(m, "--mem-fraction-static", "its default for this device") +
                      " of the device for the weights and its KV-cache pool; the activations and "
                      "CUDA graphs need the rest");
    e.tries.push_back(
        "a lower --mem-fraction-static: a smaller KV-cache pool leaves the activations and CUDA "
        "graphs more");
    e.tries.push_back(
        "fewer --max-running-requests, a smaller --chunked-prefill-size or --context-length");
    e.tries.push_back("--disable-cuda-graph, or a smaller --cuda-graph-max-bs");
    e.tries.push_back(
        "where there are more devices, a larger --tp-size; or a quantized model: the weights and "
        "the cache spread over more devices, or take less");
}

void tgi_tries(OomExplanation& e) {
    e.facts.push_back(
        "the log is text-generation-inference's (TGI): at start it warms up with the largest "
        "batch its limits allow, then keeps what is left of --cuda-memory-fraction for the KV "
        "cache");
    e.tries.push_back(
        "a smaller --max-batch-prefill-tokens and --max-total-tokens (or --max-input-tokens): "
        "the warm-up's batch and each request's cache shrink");
    e.tries.push_back("a lower --cuda-memory-fraction where other processes share the GPU");
    e.tries.push_back(
        "--quantize, or more GPUs with --num-shard: the weights take less, or spread");
}

void comfyui_tries(OomExplanation& e) {
    e.facts.push_back(
        "the log is ComfyUI's: it loads the workflow's models and moves them off the GPU by its "
        "own rules; the workflow's sizes (resolution, frames, batch_size) set the rest");
    e.tries.push_back(
        "a lower resolution, fewer frames or a smaller batch_size in the workflow; the tiled "
        "nodes (VAE Decode (Tiled)) decode in pieces");
    e.tries.push_back(
        "--lowvram (or --novram): ComfyUI keeps less of the models on the GPU and moves the rest "
        "in as needed");
    e.tries.push_back("a smaller or quantized model (fp8, GGUF), where the workflow has one");
}

}  // namespace

void add_inference_app_tries(OomExplanation& e) {
    const OomMessage& m = e.message;
    if (m.inference_app.empty() || m.shared_memory || !m.pinning.empty() ||
        m.device != OomMessage::Device::Cuda) {
        return;
    }
    // The application's own tries after the verdict's; first where the device was nearly full,
    // since its options are what use less.
    const std::size_t verdicts = e.tries.size();
    if (m.inference_app == "vLLM") {
        vllm_tries(e);
    } else if (m.inference_app == "SGLang") {
        sglang_tries(e);
    } else if (m.inference_app == "TGI") {
        tgi_tries(e);
    } else {
        comfyui_tries(e);
    }
    if (e.nearly_full) {
        std::rotate(e.tries.begin(), e.tries.begin() + std::ptrdiff_t(verdicts), e.tries.end());
    }
}

}  // namespace oomlab::oom_explain
