// Device names of the config ("auto", "cpu", "cuda", "cuda:N") as torch devices.
#pragma once

#include <c10/core/Device.h>

#include <string>

namespace oomlab::torch_utils {

// Throws BadInput naming the `device` key when the device is not there.
c10::Device resolve_device(const std::string& name);
std::string describe_device(const c10::Device& device);

}  // namespace oomlab::torch_utils
