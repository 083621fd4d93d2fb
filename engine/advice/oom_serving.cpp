// A serving engine's out-of-memory (oom_explain.h): vLLM and SGLang set their memory aside at
// start, by their options, for the weights, the KV cache, CUDA graphs and the activations of the
// largest batch they profile; a training loop's advice does not reach them.
#include "oom_explain.h"

namespace oomlab::oom_explain {

void add_serving_tries(OomExplanation& e) {
    const OomMessage& m = e.message;
    if (m.serving.empty() || m.shared_memory || !m.pinning.empty() ||
        m.device != OomMessage::Device::Cuda) {
        return;
    }
    if (m.serving == "vLLM") {
        e.facts.push_back(
            "the log is vLLM's: it takes --gpu-memory-utilization of the device (0.9 by default) "
            "for the weights, the KV cache and the activations of the largest batch it "
            "profiles; CUDA graphs' capture and other processes need room beside it");
        e.tries.push_back(
            "a lower --gpu-memory-utilization: what vLLM does not take is what its CUDA graphs, "
            "sampler and other processes have");
        e.tries.push_back(
            "a shorter --max-model-len, fewer --max-num-seqs or --max-num-batched-tokens: the "
            "largest batch's activations and each sequence's KV cache shrink");
        e.tries.push_back("--enforce-eager: no CUDA graphs, whose capture holds memory of its own");
        e.tries.push_back(
            "a larger --tensor-parallel-size, or a quantized model: the weights and the cache "
            "spread over more devices, or take less");
        return;
    }
    e.facts.push_back(
        "the log is SGLang's: it takes --mem-fraction-static of the device for the weights and its "
        "KV-cache pool; the activations and CUDA graphs need the rest");
    e.tries.push_back(
        "a lower --mem-fraction-static: a smaller KV-cache pool leaves the activations and CUDA "
        "graphs more");
    e.tries.push_back(
        "fewer --max-running-requests, a smaller --chunked-prefill-size or --context-length");
    e.tries.push_back("--disable-cuda-graph, or a smaller --cuda-graph-max-bs");
    e.tries.push_back(
        "a larger --tp-size, or a quantized model: the weights and the cache spread over more "
        "devices, or take less");
}

}  // namespace oomlab::oom_explain
