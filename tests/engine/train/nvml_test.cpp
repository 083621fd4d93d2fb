// NVML is optional: a missing or wrong library is an explanation, never a failure.
#include <gtest/gtest.h>

#include "measure/nvml.h"
#include "oomlab/common/errors.h"
#include "test_support.h"

namespace oomlab::memory {
namespace {

std::string load_error(const std::string& library) {
    try {
        Nvml nvml(library);
    } catch (const Error& error) {
        return error.what();
    }
    return "";
}

TEST(Nvml, AMissingLibraryIsReportedByName) {
    const std::string error = load_error("libnvidia-ml-not-here.so.1");
    EXPECT_NE(error.find("cannot load libnvidia-ml-not-here.so.1"), std::string::npos) << error;
}

TEST(Nvml, ALibraryThatIsNotNvmlIsRefused) {
    const std::string error = load_error("libc.so.6");
    EXPECT_NE(error.find("not the NVML library"), std::string::npos) << error;
}

TEST(Nvml, ALibraryWhoseInitialisationFailsSaysSoAndAsksAboutTheDriver) {
    const std::string error = load_error(test::failing_nvml_library());
    EXPECT_NE(error.find("nvmlInit failed (NVML error 9)"), std::string::npos) << error;
    EXPECT_NE(error.find("is the NVIDIA driver loaded?"), std::string::npos) << error;
}

TEST(Nvml, TheProcessInstanceIsThereOrSaysWhyNot) {
    if (const Nvml* nvml = Nvml::instance()) {
        EXPECT_FALSE(nvml->driver_version().empty());
        EXPECT_EQ(nvml->memory("0000:ff:1f.7"), std::nullopt);  // no such device
    } else {
        EXPECT_FALSE(Nvml::missing_reason().empty());
    }
}

}  // namespace
}  // namespace oomlab::memory
