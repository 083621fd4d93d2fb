// Device-wide memory from NVML (the library behind nvidia-smi), loaded at run time: a build
// or machine without it simply has no device-wide figures, and the engine never links it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace oomlab::memory {

struct DeviceMemoryInfo {
    std::int64_t used = 0;  // by every process on the device, as nvidia-smi shows
    std::int64_t total = 0;
};

class Nvml {
public:
    // The process-wide NVML, loaded and initialised on first use; nullptr when the library
    // or a driver is missing (missing_reason() says which).
    static const Nvml* instance();
    static std::string missing_reason();

    // Loads `library` afresh (tests use a name that does not exist, or a library that is not
    // NVML). Throws Error saying what is missing.
    explicit Nvml(const std::string& library);
    ~Nvml();
    Nvml(const Nvml&) = delete;
    Nvml& operator=(const Nvml&) = delete;

    // The device with this PCI bus id ("0000:65:00.0", as CUDA reports it); nullopt when
    // NVML does not know it.
    std::optional<DeviceMemoryInfo> memory(const std::string& pci_bus_id) const;
    std::string driver_version() const;

private:
    struct Api;
    void* m_library = nullptr;
    Api* m_api = nullptr;
};

}  // namespace oomlab::memory
