// Dataset readers: the first byte picks the format, the rest is the file.
#include "fuzz_input.h"
#include "oomlab/common/errors.h"
#include "oomlab/data/dataset.h"
#include "oomlab/data/tokenizer.h"

namespace {

constexpr oomlab::DatasetFormat kFormats[] = {
    oomlab::DatasetFormat::Auto,         oomlab::DatasetFormat::LabelTabText,
    oomlab::DatasetFormat::TextTabLabel, oomlab::DatasetFormat::LabelSpaceText,
    oomlab::DatasetFormat::Csv,          oomlab::DatasetFormat::FastText,
    oomlab::DatasetFormat::JsonLines,
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) {
        return 0;
    }
    const auto format = kFormats[data[0] % (sizeof kFormats / sizeof kFormats[0])];
    const oomlab::fuzz::MemoryFile file(data + 1, size - 1);
    try {
        for (const auto& example : oomlab::read_raw_examples(file.path(), format)) {
            oomlab::tokenize(example.text);
        }
    } catch (const oomlab::BadInput&) {
    }
    return 0;
}
