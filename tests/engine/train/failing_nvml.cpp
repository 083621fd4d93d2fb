// A library with NVML's entry points whose initialisation fails as NVML's does on a machine
// whose driver is not loaded (NVML_ERROR_DRIVER_NOT_LOADED), for the engine's NVML loader.
extern "C" {
int nvmlInit_v2() {
    return 9;
}
int nvmlShutdown() {
    return 0;
}
int nvmlDeviceGetHandleByPciBusId_v2(const char*, void**) {
    return 9;
}
int nvmlDeviceGetMemoryInfo(void*, void*) {
    return 9;
}
int nvmlSystemGetDriverVersion(char*, unsigned int) {
    return 9;
}
}
