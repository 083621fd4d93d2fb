// The allocator settings a snapshot recorded ("allocator_settings", PyTorch 2.x).
#include "snapshot_alloc_conf.h"

#include <cstdio>
#include <cstdlib>

#include "oomlab/allocator/allocator_settings.h"

namespace oomlab::snapshot {

std::optional<std::string> recorded_alloc_conf(const PickleValue* settings, std::string& problem) {
    if (!settings || !settings->dict()) {
        return std::nullopt;
    }
    allocator::AllocatorSettings read;
    if (const PickleValue* split = settings->at("max_split_size");
        split && split->integer(-1) > 0) {
        read.max_split_size = split->integer();
    }
    if (const PickleValue* gc = settings->at("garbage_collection_threshold")) {
        // 0 is PyTorch's "none"; anything else outside (0, 1), NaN among it, PyTorch refuses.
        const double threshold = gc->real();
        if (threshold > 0 && threshold < 1) {
            read.garbage_collection_threshold = threshold;
        } else if (threshold != 0) {
            char text[32];
            std::snprintf(text, sizeof text, "%g", threshold);
            problem = std::string("the snapshot recorded garbage_collection_threshold ") + text +
                      ", which PyTorch takes only between 0 and 1: the replay leaves it out";
        }
    }
    if (const PickleValue* expandable = settings->at("expandable_segments")) {
        read.expandable_segments = expandable->integer() != 0;
    }
    if (const PickleValue* divisions = settings->at("roundup_power2_divisions");
        divisions && divisions->dict()) {
        const PickleContainer& entries = *divisions->dict();
        for (std::size_t entry = 0; entry < entries.size(); ++entry) {
            const std::string* mib = entries.key(entry).text();
            const std::int64_t start = mib ? std::strtoll(mib->c_str(), nullptr, 10) : 0;
            int index = 0;
            while (index < 15 && (std::int64_t(2) << index) <= start) {
                ++index;
            }
            if (start > 0) {
                read.roundup_power2_divisions[std::size_t(index)] =
                    int(entries.value(entry).integer());
            }
        }
    }
    return allocator::to_alloc_conf(read);
}

}  // namespace oomlab::snapshot
