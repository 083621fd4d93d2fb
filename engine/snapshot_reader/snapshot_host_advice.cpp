// The advice on a host's memory (snapshot_advice.h): pinned memory, and a GPU program's host
// memory in its profile. Both are the machine's RAM, not the GPU's.
#include <algorithm>

#include "oomlab/common/format.h"
#include "snapshot_advice_parts.h"

namespace oomlab {

// Pinned host memory is the machine's RAM, page-locked for copies to the GPU: none of the
// CUDA allocator's settings apply to it, and what holds it is the data path.
void advise_on_pinned_host(const SnapshotDevice& device, std::vector<SnapshotAdvice>& advice) {
    advice.push_back(
        {"pinned host memory is the machine's RAM, not the GPU's",
         format_bytes(device.peak_allocated) + " was pinned at the peak (" +
             format_bytes(device.peak_reserved) +
             " at most held by PyTorch's host allocator, which rounds each request up to a "
             "power of two and keeps freed blocks for reuse): DataLoader(pin_memory=True), "
             "tensor.pin_memory() and non_blocking copies take it, and it cannot be swapped "
             "out. Fewer DataLoader workers or a smaller prefetch_factor pin less; none of it "
             "counts against the GPU's memory."});
}

// A GPU program's host memory (its profile's CPU): none of it counts against the GPU's, so no
// line here is where a GPU's out-of-memory is cut; said once, with the line that held the most.
void advise_on_host_of_gpu_run(const SnapshotDevice& device, std::vector<SnapshotAdvice>& advice) {
    const auto named =
        std::find_if(device.at_peak.begin(), device.at_peak.end(), [](const SnapshotLine& line) {
            return !allocated_unrecorded(line.where) && line.where.rfind(kNoPythonFrame, 0) != 0;
        });
    const bool telling = named != device.at_peak.end() &&
                         double(named->bytes) >= kLineShare * double(device.peak_allocated);
    advice.push_back(
        {"the host's memory is the machine's RAM, not the GPU's",
         format_bytes(device.peak_allocated) + " of it was allocated at the peak" +
             (telling ? ", " + format_bytes(named->bytes) + " (" +
                            percent_of(named->bytes, device.peak_allocated) + ") at " + named->where
                      : std::string()) +
             ": holding less of it saves the GPU nothing; it matters where the machine's RAM ran "
             "out (\"DefaultCPUAllocator: can't allocate memory\"). " +
             (device.gpu_memory_recorded
                  ? std::string("The GPU's memory is its device's section of this report.")
                  : std::string("The trace recorded none of the GPU's memory: profile with "
                                "activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA] and "
                                "profile_memory=True, or record a memory snapshot "
                                "(torch.cuda.memory._record_memory_history())."))});
}

}  // namespace oomlab
