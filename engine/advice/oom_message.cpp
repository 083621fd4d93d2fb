// What the figures of one out-of-memory message mean (oom_message_reader.cpp reads them; the
// explanation's parts are in oom_explain.h).
#include "oomlab/advice/oom_message.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "oom_explain.h"

namespace oomlab {
namespace {

// A size asked for past any device's memory (set aside by the reader): a size computed wrong.
bool explain_impossible_request(OomExplanation& e) {
    const OomMessage& m = e.message;
    const auto request = std::find_if(m.set_aside.begin(), m.set_aside.end(), [](const auto& item) {
        return item.rfind("the size asked for", 0) == 0;
    });
    if (m.requested || request == m.set_aside.end()) {
        return false;
    }
    e.verdict = OomVerdict::TooLarge;
    e.facts.push_back(*request);
    e.summary =
        "The allocation asked for is larger than any machine's memory: a size computed wrong (a "
        "shape multiplied out, a negative size read as unsigned).";
    e.tries.push_back(
        "print the shapes of the tensors made just before: one of them is not what "
        "you meant");
    return true;
}

}  // namespace

OomExplanation explain_oom(const OomMessage& message) {
    OomExplanation explanation;
    explanation.message = message;
    if (explain_impossible_request(explanation)) {
        return explanation;
    }
    if (message.device == OomMessage::Device::Cuda) {
        oom_explain::explain_device(explanation);
    } else {
        oom_explain::explain_host(explanation);
    }
    oom_explain::add_inference_app_tries(explanation);
    return explanation;
}

const char* oom_verdict_name(OomVerdict verdict) {
    switch (verdict) {
        case OomVerdict::Fragmentation:
            return "fragmentation";
        case OomVerdict::HeldElsewhere:
            return "held_elsewhere";
        case OomVerdict::TooLarge:
            return "too_large";
        case OomVerdict::LimitReached:
            return "limit_reached";
        case OomVerdict::DeviceNotFull:
            return "device_not_full";
        case OomVerdict::OutsideAllocator:
            return "outside_allocator";
        case OomVerdict::OutOfMemory:
            break;
    }
    return "out_of_memory";
}

std::string oom_explanation_json(const OomExplanation& e) {
    using OrderedJson = nlohmann::ordered_json;
    const auto figure = [](const std::optional<std::int64_t>& value) {
        return value ? OrderedJson(*value) : OrderedJson(nullptr);
    };
    const OomMessage& m = e.message;
    OrderedJson processes = OrderedJson::array();
    for (const auto& [pid, held] : m.processes) {
        processes.push_back({{"pid", pid}, {"bytes", held}});
    }
    // The torch.device type the program used: ROCm's HIP is "cuda" to PyTorch, Intel's XPU and
    // Ascend's NPU have their own.
    const char* device = m.device == OomMessage::Device::Mps   ? "mps"
                         : m.device == OomMessage::Device::Cpu ? "cpu"
                         : m.backend == "XPU"                  ? "xpu"
                         : m.backend == "NPU"                  ? "npu"
                         : m.backend == "DirectML"             ? "privateuseone"
                                                               : "cuda";
    const OrderedJson document = {{"verdict", oom_verdict_name(e.verdict)},
                                  {"pytorch_major", m.pytorch_major},
                                  {"backend", m.backend},
                                  {"driver_level", m.driver_level},
                                  {"summary", e.summary},
                                  {"device", device},
                                  {"device_index", m.device_index},
                                  {"requested_bytes", figure(m.requested)},
                                  {"total_bytes", figure(m.total)},
                                  {"free_bytes", figure(m.free)},
                                  {"allocated_bytes", figure(m.allocated)},
                                  {"reserved_bytes", figure(m.reserved)},
                                  {"allowed_bytes", figure(m.allowed)},
                                  {"private_pools_bytes", figure(m.private_pools)},
                                  {"this_process_bytes", figure(m.this_process)},
                                  {"processes", processes},
                                  {"set_aside", m.set_aside},
                                  {"facts", e.facts},
                                  {"tries", e.tries}};
    return document.dump(-1, ' ', false, OrderedJson::error_handler_t::replace);
}

}  // namespace oomlab
