// What makes a run hold less after an accelerator's out-of-memory (oom_explain.h), as the text
// around the message tells what it was doing: putting a model's weights on the device, running
// inference (a diffusion pipeline, text generation), an evaluation, the optimizer's step, or, as
// for a message alone, a training step. A training step's batch, precision and checkpointing do not
// reach the others.
#include "oom_explain.h"

namespace oomlab::oom_explain {
namespace {

using Work = OomMessage::Work;

// The memory history, the tool that shows where it went, for the backend's own module.
std::string measure_try(const DeviceReading& r) {
    return "measure where it goes: oomlab-cli estimate and run show the breakdown for its own "
           "models, and " +
           r.on.module + ".memory._record_memory_history for yours" +
           // XPU's memory history was merged at the turn of 2026 (2.10 or 2.11); CUDA's is 2.1's.
           (r.m.backend == "XPU" ? std::string(" (on XPU, only in PyTorch's releases of 2026)")
                                 : std::string());
}

// What shrinks a training step's memory, as the release the message is from has it.
void training_tries(OomExplanation& e, const DeviceReading& r) {
    e.tries.push_back(
        "a smaller batch: activations grow with it (keep the effective batch with "
        "gradient accumulation)");
    if (r.m.pytorch_0x) {  // 0.x: the tools came later
        e.tries.push_back(
            "a newer PyTorch: mixed precision (torch.cuda.amp, 1.6 and later; NVIDIA's "
            "apex.amp before), activation checkpointing (torch.utils.checkpoint, 0.4.1 and "
            "later) and the memory history (2.1 and later) each shrink or show what is held");
        return;
    }
    e.tries.push_back(
        "mixed precision (bf16, or fp16 with a grad scaler): activations take half the memory");
    e.tries.push_back(
        "activation checkpointing: blocks keep only their inputs and recompute in backward");
    e.tries.push_back(measure_try(r));
}

// The weights themselves did not fit: no batch or checkpointing changes what they take.
void weights_tries(OomExplanation& e, const DeviceReading& r) {
    e.facts.push_back(
        "it failed putting a model's weights on the " + r.on.device +
        " (the frames before the message: Module.to converting each parameter, a "
        "from_pretrained or load_state_dict load, or a layer's parameters made there): the "
        "weights and what the process held before them filled it, not a batch's activations");
    e.tries.push_back(
        "the weights in fewer bytes: torch_dtype=torch.bfloat16 (or float16) takes half of "
        "float32, a quantized load (bitsandbytes' load_in_8bit or load_in_4bit) a quarter or an "
        "eighth");
    e.tries.push_back(
        "part of them off this device: device_map=\"auto\" with max_memory (Accelerate), "
        "diffusers' pipe.enable_model_cpu_offload() (one of the pipeline's models on the GPU "
        "at a time), or the model split over several GPUs (tensor parallelism; FSDP or ZeRO-3 "
        "to train it)");
    e.tries.push_back(
        "count them first: parameters times bytes each (7 billion in bf16 are 13 GiB), beside "
        "what the process held before loading" +
        (r.m.total ? ", against the " + printed_size(*r.m.total) + " the device holds"
                   : std::string()));
}

// Inference keeps no activations for a backward, unless autograd records them: what it holds
// is the weights, the inputs in flight and, for generation, the key/value cache. A diffusers
// pipeline and generate() run without autograd already.
void inference_tries(OomExplanation& e, const DeviceReading& r) {
    const Work work = r.m.work;
    e.facts.push_back(
        std::string("the frames or words around the message are inference's (") +
        (work == Work::Diffusion    ? "a diffusers pipeline"
         : work == Work::Generation ? "text generation"
                                    : "an inference script or library") +
        "): what a training step's batch, precision and checkpointing change is not there");
    if (work == Work::Diffusion) {
        e.tries.push_back(
            "a smaller image, fewer frames or fewer images per prompt (num_images_per_prompt): "
            "the latents and attention grow with each");
        e.tries.push_back(
            "the pipeline's own savers: pipe.enable_model_cpu_offload() (one model on the GPU at "
            "a time), pipe.enable_attention_slicing(), pipe.vae.enable_tiling() for large "
            "images");
    } else if (work == Work::Generation) {
        e.tries.push_back(
            "shorter inputs, fewer max_new_tokens, fewer num_beams or num_return_sequences, a "
            "smaller batch: the key/value cache grows with each");
        e.tries.push_back(
            "a quantized load (bitsandbytes' load_in_8bit or load_in_4bit), or device_map=\"auto\" "
            "with max_memory to keep some layers off the GPU: the weights leave the cache more");
    } else {
        e.tries.push_back(
            "fewer or smaller inputs at once: fewer items per batch, shorter sequences, smaller "
            "images or less audio; activations and attention grow with each");
        e.tries.push_back(
            "torch.inference_mode() (or torch.no_grad()) around the model's calls, if it is not "
            "there: otherwise each layer's activations are kept for a backward that never comes");
    }
    e.tries.push_back(
        "half precision (torch_dtype=torch.float16 or bfloat16): weights and activations take "
        "half of float32");
    e.tries.push_back(measure_try(r));
}

// An evaluation or a test (within training, its weights, gradients and optimizer state stay on
// the device beside it): what it makes at once, and what it keeps of its results.
void evaluation_tries(OomExplanation& e, const DeviceReading& r) {
    e.facts.push_back(
        "the frames just before the message are an evaluation's, a validation's or a test's: no "
        "backward runs there, and a training run's weights, gradients and optimizer state stay "
        "on the device beside it");
    e.tries.push_back(
        "fewer or smaller inputs per evaluation step (an evaluation batch size of its own), or "
        "the evaluation in chunks: what it makes at once grows with each");
    e.tries.push_back(
        "keep its results off the device: move predictions, scores or what it gathers to the "
        "CPU as they are made (.cpu(), or the library's own option for where outputs go) rather "
        "than gathering them all on the device");
    e.tries.push_back(
        "torch.no_grad() or torch.inference_mode() around it, if it is not there: otherwise "
        "each layer's activations are kept for a backward that never comes");
    e.tries.push_back(
        "within training, free the step's memory first: optimizer.zero_grad(set_to_none=True), "
        "and no loss or outputs kept from the last step");
    e.tries.push_back(measure_try(r));
}

// The optimizer's step, or its state being made: the state and the step's temporaries grow
// with the parameters that train, not with the batch.
void optimizer_tries(OomExplanation& e, const DeviceReading& r) {
    e.facts.push_back(
        "the frames just before the message are the optimizer's (its step, or its state being "
        "made): Adam's state is two fp32 moments per parameter that trains, 8 bytes each, and "
        "its step's temporaries grow with the parameters, not with the batch");
    e.tries.push_back(
        "an optimizer that keeps less: 8-bit Adam (bitsandbytes' AdamW8bit), Adafactor, or SGD "
        "with momentum (one moment)");
    e.tries.push_back(
        "shard or offload its state: ZeRO stage 1 or 2 (DeepSpeed), FSDP, or "
        "torch.distributed.optim.ZeroRedundancyOptimizer over several devices; DeepSpeed's "
        "offload_optimizer keeps it in the host's memory");
    e.tries.push_back(
        "foreach=False in the optimizer (or fused=True where it takes it): the default foreach "
        "step makes temporaries for a whole group of tensors at once");
    e.tries.push_back(
        "fewer parameters that train: LoRA adapters (PEFT) or frozen layers "
        "(requires_grad=False); the optimizer keeps state only for those that train");
    e.tries.push_back(measure_try(r));
}

}  // namespace

void hold_less_tries(OomExplanation& e, const DeviceReading& r) {
    switch (r.m.work) {
        case Work::LoadingWeights:
            weights_tries(e, r);
            return;
        case Work::Inference:
        case Work::Diffusion:
        case Work::Generation:
            inference_tries(e, r);
            return;
        case Work::Evaluation:
            evaluation_tries(e, r);
            return;
        case Work::OptimizerStep:
            optimizer_tries(e, r);
            return;
        case Work::Unknown:
            training_tries(e, r);
            return;
    }
}

std::string hold_less_words(const OomMessage& m) {
    switch (m.work) {
        case Work::LoadingWeights:
            return "weights in fewer bytes (bf16, quantized) or partly off the device";
        case Work::Inference:
        case Work::Diffusion:
        case Work::Generation:
            return "fewer or smaller inputs at once, or half precision";
        case Work::Evaluation:
            return "fewer or smaller inputs per evaluation step, or its results moved to the CPU";
        case Work::OptimizerStep:
            return "an optimizer that keeps less, or its state sharded or offloaded";
        case Work::Unknown:
            break;
    }
    return "a smaller batch, mixed precision or activation checkpointing";
}

}  // namespace oomlab::oom_explain
