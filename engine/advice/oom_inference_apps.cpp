// An inference application's out-of-memory (oom_explain.h): vLLM and SGLang set their memory
// aside at start, by their options, for the weights, the KV cache, CUDA graphs and the
// activations of the largest batch they profile (TGI warms up with its largest); ComfyUI and
// the Stable Diffusion web UI load and offload models by their own rules; a device_map places
// a model's layers once, at load.
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
    if (m.work == OomMessage::Work::LoadingWeights) {  // before the cache and graphs exist
        e.facts.push_back(
            "the log is vLLM's, and it failed making or loading the model's weights (the "
            "frames before the message), before its KV cache or CUDA graphs: the weights "
            "alone did not fit the device");
        e.tries.push_back(
            "a larger --tensor-parallel-size (or --pipeline-parallel-size) over more devices, "
            "or a quantized model (--quantization): each device holds a share of the weights, "
            "or they take less");
        e.tries.push_back(
            "a smaller model: its parameters times bytes each (70 billion in fp16 are 130 GiB) "
            "must fit with room for the cache");
        return;
    }
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
    if (e.message.work == OomMessage::Work::LoadingWeights) {  // a node loading its model
        e.facts.push_back(
            "it failed loading a model's weights (the frames before the message): the "
            "workflow's sizes come later");
        e.tries.push_back(
            "a smaller or quantized model (fp8, GGUF, 4-bit), where the node takes one");
        e.tries.push_back(
            "--lowvram (or --novram): ComfyUI keeps less of the models on the GPU and moves the "
            "rest in as needed");
        return;
    }
    e.tries.push_back(
        "a lower resolution, fewer frames or a smaller batch_size in the workflow; the tiled "
        "nodes (VAE Decode (Tiled)) decode in pieces");
    e.tries.push_back(
        "--lowvram (or --novram): ComfyUI keeps less of the models on the GPU and moves the rest "
        "in as needed");
    e.tries.push_back("a smaller or quantized model (fp8, GGUF), where the workflow has one");
}

void webui_tries(OomExplanation& e) {
    e.facts.push_back(
        "the log is Stable Diffusion web UI's (AUTOMATIC1111's, or a fork's): it keeps the "
        "whole model on the GPU unless told otherwise; the image's size and the batch set the "
        "rest");
    e.tries.push_back(
        "--medvram (--medvram-sdxl for SDXL only), or --lowvram on a card of 4 GiB or less: "
        "the web UI keeps parts of the model off the GPU and moves each in when it runs");
    e.tries.push_back(
        "a smaller image or batch size; a tiled VAE (the Tiled VAE or Tiled Diffusion "
        "extension) for large images");
    e.tries.push_back(
        "--opt-sdp-attention or --xformers: attention in pieces, not as one large matrix");
}

void accelerate_tries(OomExplanation& e) {
    e.facts.push_back(
        "the log is of a model loaded with a device_map (Accelerate's big-model loading, for "
        "inference): the map filled the GPU with layers and offloaded the rest, leaving the "
        "activations and the KV cache of generation little room");
    e.tries.push_back(
        "max_memory in from_pretrained (for example {0: \"10GiB\", \"cpu\": \"30GiB\"}) a few "
        "GiB under the GPU's size: fewer layers on the GPU leave room for generating");
    e.tries.push_back(
        "a quantized load (BitsAndBytesConfig with load_in_8bit or load_in_4bit): the weights "
        "take a half or a quarter");
    e.tries.push_back(
        "shorter inputs, fewer max_new_tokens or a smaller batch: the KV cache and activations "
        "grow with them");
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
    } else if (m.inference_app == "ComfyUI") {
        comfyui_tries(e);
    } else if (m.inference_app == "Accelerate") {
        accelerate_tries(e);
    } else {
        webui_tries(e);
    }
    // A device full of what the application set aside, or a driver's allocation beside it, is
    // changed by its options first; a verdict of fragmentation or of another process holding
    // the device keeps its own tries first.
    if (e.nearly_full || m.driver_level || e.verdict == OomVerdict::OutOfMemory) {
        std::rotate(e.tries.begin(), e.tries.begin() + std::ptrdiff_t(verdicts), e.tries.end());
    }
}

}  // namespace oomlab::oom_explain
