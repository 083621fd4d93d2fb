// What pytorch.org/memory_viz needs of a memory snapshot to draw "Allocator State History":
// it starts from the final segments and undoes the trace event by event, newest first, so
// every undo must find the segment or block it acts on. Checked here on the snapshot as JSON
// (see pickle_as_json); returns the problems found, empty when the viewer can walk it all.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace oomlab::test {

inline std::vector<std::string> snapshot_replay_problems(const nlohmann::json& snapshot) {
    std::vector<std::string> problems;
    const auto problem = [&](const std::string& text) {
        if (problems.size() < 20) {
            problems.push_back(text);
        }
    };
    struct Segment {
        std::int64_t size = 0;
        std::map<std::int64_t, std::int64_t> allocated;  // block address -> size
    };
    std::map<std::int64_t, Segment> segments;  // by address
    for (const auto& segment : snapshot.at("segments")) {
        const std::int64_t address = segment.at("address");
        const std::int64_t size = segment.at("total_size");
        if (size <= 0) {
            problem("segment at " + std::to_string(address) + " has size " + std::to_string(size));
        }
        std::int64_t offset = 0;
        for (const auto& block : segment.at("blocks")) {
            const std::int64_t block_size = block.at("size");
            if (block_size <= 0) {
                problem("a block of size " + std::to_string(block_size));
            }
            if (block.at("state") == "active_allocated") {
                segments[address].allocated[address + offset] = block_size;
            }
            offset += block_size;
        }
        if (offset != size) {
            problem("the blocks of segment " + std::to_string(address) + " add up to " +
                    std::to_string(offset) + ", not " + std::to_string(size));
        }
        segments[address].size = size;
    }
    // The segment holding [address, address + size), or nullptr.
    const auto containing = [&](std::int64_t address, std::int64_t size) -> Segment* {
        auto it = segments.upper_bound(address);
        if (it == segments.begin()) {
            return nullptr;
        }
        --it;
        return address + size <= it->first + it->second.size ? &it->second : nullptr;
    };
    const auto& trace = snapshot.at("device_traces").at(0);
    // Forward: each free's request is followed at once by its completion.
    for (std::size_t i = 0; i < trace.size(); ++i) {
        if (trace[i].at("action") == "free_requested" &&
            (i + 1 == trace.size() || trace[i + 1].at("action") != "free_completed" ||
             trace[i + 1].at("addr") != trace[i].at("addr"))) {
            problem("free_requested at event " + std::to_string(i) + " is not completed next");
        }
    }
    // Backward, as the viewer undoes it.
    for (std::size_t i = trace.size(); i-- > 0;) {
        const auto& event = trace[i];
        const std::string action = event.at("action");
        if (action == "oom") {
            if (!event.contains("device_free") || event.contains("addr")) {
                problem("oom event " + std::to_string(i) + " lacks device_free");
            }
            continue;
        }
        const std::int64_t address = event.at("addr");
        const std::int64_t size = event.at("size");
        const std::string where = action + " at event " + std::to_string(i);
        if (size <= 0) {
            problem(where + " has size " + std::to_string(size));
        }
        if (action == "segment_free") {
            if (segments.count(address)) {
                problem(where + ": the segment still exists");
            }
            segments[address].size = size;
        } else if (action == "free_completed") {
            Segment* segment = containing(address, size);
            if (!segment) {
                problem(where + ": no segment holds the block");
            } else {
                segment->allocated[address] = size;
            }
        } else if (action == "alloc") {
            Segment* segment = containing(address, size);
            if (!segment || !segment->allocated.count(address)) {
                problem(where + ": no allocated block to undo");
            } else {
                segment->allocated.erase(address);
            }
        } else if (action == "segment_alloc") {
            const auto it = segments.find(address);
            if (it == segments.end()) {
                problem(where + ": no segment to undo");
            } else if (!it->second.allocated.empty()) {
                problem(where + ": the segment still holds blocks");
            } else {
                segments.erase(it);
            }
        }
    }
    return problems;
}

}  // namespace oomlab::test
