// Config files: any bytes give a valid config or BadInput naming what is wrong.
#include <string>

#include "oomlab/common/errors.h"
#include "oomlab/config/config_io.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        const oomlab::ExperimentConfig config = oomlab::parse_config_json(text, "fuzz.json");
        oomlab::validate_config(config);
        // What is written must read back.
        oomlab::parse_config_json(oomlab::config_to_json(config), "again.json");
    } catch (const oomlab::BadInput&) {
    }
    return 0;
}
