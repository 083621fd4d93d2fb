#include "oomlab/common/size_text.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <utility>

namespace oomlab {

std::optional<double> size_text_bytes(const std::string& text) {
    double number = 0;
    const char* end = text.data() + text.size();
    const auto [rest, error] = std::from_chars(text.data(), end, number);
    std::string unit(rest, end);
    unit.erase(std::remove(unit.begin(), unit.end(), ' '), unit.end());
    std::transform(unit.begin(), unit.end(), unit.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    static const std::pair<const char*, int> kUnits[] = {
        {"", 0},     {"b", 0},  {"k", 10},  {"kb", 10},  {"kib", 10}, {"m", 20},  {"mb", 20},
        {"mib", 20}, {"g", 30}, {"gb", 30}, {"gib", 30}, {"t", 40},   {"tb", 40}, {"tib", 40}};
    const auto* known = std::find_if(std::begin(kUnits), std::end(kUnits),
                                     [&](const auto& item) { return unit == item.first; });
    if (error != std::errc() || known == std::end(kUnits) || !(number >= 0) ||
        !std::isfinite(number)) {
        return std::nullopt;
    }
    return number * double(std::int64_t(1) << known->second);
}

}  // namespace oomlab
