#include "nvml.h"

#include <dlfcn.h>

#include <memory>
#include <mutex>

#include "oomlab/common/errors.h"

namespace oomlab::memory {

// The few NVML declarations used, from its stable C ABI (nvml.h is not needed to build). Not
// in an anonymous namespace: Nvml::Api, declared in a header, holds them.
using NvmlReturn = int;  // nvmlReturn_t; 0 is NVML_SUCCESS
using NvmlDevice = struct NvmlDeviceOpaque*;
struct NvmlMemory {
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
};

constexpr NvmlReturn kSuccess = 0;

struct Nvml::Api {
    NvmlReturn (*init)();
    NvmlReturn (*shutdown)();
    NvmlReturn (*handle_by_pci_bus_id)(const char*, NvmlDevice*);
    NvmlReturn (*memory_info)(NvmlDevice, NvmlMemory*);
    NvmlReturn (*driver_version)(char*, unsigned int);
};

namespace {

template <typename Function>
void bind(void* library, const std::string& name, const char* symbol, Function& function) {
    function = reinterpret_cast<Function>(dlsym(library, symbol));
    if (!function) {
        throw Error(name + " has no " + symbol + ": not the NVML library");
    }
}

}  // namespace

Nvml::Nvml(const std::string& library) {
    m_library = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!m_library) {
        const char* why = dlerror();
        throw Error("cannot load " + library + (why ? std::string(": ") + why : std::string()));
    }
    auto api = std::make_unique<Api>();
    try {
        bind(m_library, library, "nvmlInit_v2", api->init);
        bind(m_library, library, "nvmlShutdown", api->shutdown);
        bind(m_library, library, "nvmlDeviceGetHandleByPciBusId_v2", api->handle_by_pci_bus_id);
        bind(m_library, library, "nvmlDeviceGetMemoryInfo", api->memory_info);
        bind(m_library, library, "nvmlSystemGetDriverVersion", api->driver_version);
        const NvmlReturn status = api->init();
        if (status != kSuccess) {
            throw Error(library + ": nvmlInit failed (NVML error " + std::to_string(status) +
                        "); is the NVIDIA driver loaded?");
        }
    } catch (...) {
        dlclose(m_library);
        throw;
    }
    m_api = api.release();
}

Nvml::~Nvml() {
    if (m_api) {
        m_api->shutdown();
        delete m_api;
    }
    if (m_library) {
        dlclose(m_library);
    }
}

std::optional<DeviceMemoryInfo> Nvml::memory(const std::string& pci_bus_id) const {
    NvmlDevice device = nullptr;
    if (m_api->handle_by_pci_bus_id(pci_bus_id.c_str(), &device) != kSuccess) {
        return std::nullopt;
    }
    NvmlMemory memory{};
    if (m_api->memory_info(device, &memory) != kSuccess) {
        return std::nullopt;
    }
    return DeviceMemoryInfo{static_cast<std::int64_t>(memory.used),
                            static_cast<std::int64_t>(memory.total)};
}

std::string Nvml::driver_version() const {
    char version[96] = {};
    return m_api->driver_version(version, sizeof version) == kSuccess ? version : "";
}

namespace {

struct ProcessNvml {
    std::unique_ptr<Nvml> nvml;
    std::string missing_reason;
};

const ProcessNvml& process_nvml() {
    static const ProcessNvml loaded = [] {
        ProcessNvml result;
        try {
            result.nvml = std::make_unique<Nvml>("libnvidia-ml.so.1");
        } catch (const Error& error) {
            result.missing_reason = error.what();
        }
        return result;
    }();
    return loaded;
}

}  // namespace

const Nvml* Nvml::instance() {
    return process_nvml().nvml.get();
}

std::string Nvml::missing_reason() {
    return process_nvml().missing_reason;
}

}  // namespace oomlab::memory
