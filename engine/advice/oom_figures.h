// The figures of one out-of-memory message, each read where PyTorch's wording puts it: after
// or before the words beside it, in any case, in the units PyTorch prints (oom_message_reader.cpp).
// No std::regex: its matcher recursed once per character, and a number of 30,000 digits
// overflowed the stack. Every scan here is linear in the text.
#pragma once

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "oom_message_text.h"
#include "oomlab/common/errors.h"

namespace oomlab::oom_figures {

using oom_text::is_digit;
constexpr std::size_t kNone = std::string_view::npos;

// The longest number taken as a figure ("16777216.00" is 11 characters).
constexpr std::size_t kMostFigure = 30;
// 1 EiB: more than any device holds; sums of a few such figures still fit in 64 bits.
constexpr double kMostBytes = 1152921504606846976.0;
constexpr long long kMostDevice = 65535;
constexpr long long kMostCount = 1LL << 60;

struct Unit {
    std::string_view name;  // lower case: units are read in any case
    double scale;
};
constexpr double kKiB = 1024.0, kMiB = kKiB * 1024, kGiB = kMiB * 1024, kTiB = kGiB * 1024,
                 kPiB = kTiB * 1024;
// In the order tried: "PiB" before "B". PyTorch's MPS counts a "GB" as 1024 MB, as these do.
constexpr Unit kUnits[] = {{"pib", kPiB}, {"tib", kTiB}, {"gib", kGiB}, {"mib", kMiB},
                           {"kib", kKiB}, {"pb", kPiB},  {"tb", kTiB},  {"gb", kGiB},
                           {"mb", kMiB},  {"kb", kKiB},  {"bytes", 1},  {"b", 1}};

inline bool is_word(char c) {
    return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

// A figure as a message may quote it: its first characters.
inline std::string shown(std::string_view token) {
    return token.size() <= 24 ? std::string(token) : std::string(token.substr(0, 24)) + "...";
}

// The figures of one message, each found after or before the words PyTorch puts beside it.
class Figures {
public:
    explicit Figures(std::string_view text) : m_text(text), m_lower(text) {
        std::transform(m_lower.begin(), m_lower.end(), m_lower.begin(), [](char c) {
            return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
        });
    }

    // The size right after the first `words` (lower case) that `then` follows, if given.
    std::optional<std::int64_t> after(std::string_view words, const char* what,
                                      std::string_view then = {}) const {
        for (std::size_t at = find(words, 0); at != kNone; at = find(words, at + 1)) {
            if (const auto size = size_at(at + words.size(), what, then)) {
                return size;
            }
        }
        return std::nullopt;
    }

    // The size right before the first `words` (lower case) that have one.
    std::optional<std::int64_t> before(std::string_view words, const char* what) const {
        for (std::size_t at = find(words, 0); at != kNone; at = find(words, at + 1)) {
            if (!followed_by(at, words)) {
                continue;
            }
            if (const auto size = size_ending(at, what)) {
                return size;
            }
        }
        return std::nullopt;
    }

    // The size right before `words` (lower case) cut by the text's end after at least
    // `at_least` of its characters: a post stored short, "6.83 GiB rese".
    std::optional<std::int64_t> before_cut(std::string_view words, std::size_t at_least,
                                           const char* what) const {
        std::size_t end = m_lower.size();
        while (end > 0 && (m_lower[end - 1] == ' ' || m_lower[end - 1] == '`' ||
                           m_lower[end - 1] == '\n' || m_lower[end - 1] == '\r')) {
            --end;
        }
        for (std::size_t kept = words.size() - 1; kept >= at_least && kept <= end; --kept) {
            if (m_lower.compare(end - kept, kept, words.substr(0, kept)) == 0) {
                return size_ending(end - kept, what);
            }
        }
        return std::nullopt;
    }

    // "GPU 1" (2.x) or "(GPU 0;" (1.x), Ascend's "(NPU 0;", the cudaMallocAsync backend's
    // "Allocation on device 0": the first device the message names; -1 when none.
    int device_number() const {
        // The backend's number is followed by its sentence: a log's next line may begin with
        // a date ("Allocation on device \n2024-12-16 ...").
        constexpr std::pair<std::string_view, std::string_view> kNames[] = {
            {"GPU ", ""}, {"NPU ", ""}, {"on device ", " would exceed"}};
        for (const auto& [name, then] : kNames) {
            for (std::size_t at = m_text.find(name); at != kNone; at = m_text.find(name, at + 1)) {
                const std::size_t begin = at + name.size();
                const std::size_t end = whole_end(begin);
                if (end != begin && m_text.compare(end, then.size(), then) == 0) {
                    return static_cast<int>(whole(begin, end, kMostDevice, "the GPU's number"));
                }
            }
        }
        return -1;
    }

    // The whole number of bytes after the first `words` (lower case) that have one, spaces
    // between allowed: Triton's "Required: 294912 Hardware limit:232448".
    std::optional<std::int64_t> count_after(std::string_view words, const char* what) const {
        for (std::size_t at = find(words, 0); at != kNone; at = find(words, at + 1)) {
            std::size_t begin = at + words.size();
            begin += begin < m_text.size() && m_text[begin] == ' ';
            const std::size_t end = whole_end(begin);
            if (end != begin) {
                return whole(begin, end, kMostCount, what);
            }
        }
        return std::nullopt;
    }

    // "Process 811 has 14.02 GiB memory in use": every process on the GPU.
    std::vector<std::pair<int, std::int64_t>> processes() const {
        std::vector<std::pair<int, std::int64_t>> result;
        constexpr std::string_view kWords = "Process ";
        for (std::size_t at = m_text.find(kWords); at != kNone; at = m_text.find(kWords, at + 1)) {
            const std::size_t begin = at + kWords.size();
            const std::size_t end = whole_end(begin);
            if (end == begin || m_text.compare(end, 5, " has ") != 0) {
                continue;
            }
            if (const auto held = size_at(end + 5, "a process's memory", " memory in use")) {
                result.emplace_back(whole(begin, end, INT_MAX, "a process id"), *held);
            }
        }
        return result;
    }

    // The figures read that no device could hold, in words, each once.
    std::vector<std::string> figures_set_aside() const { return set_aside(); }
    // Whether the message says `words` (lower case).
    bool says(std::string_view words) const { return find(words, 0) != kNone; }

    // "Error code 12 (Cannot allocate memory)": the system's words.
    std::optional<std::string> system_error() const {
        const std::size_t at = m_text.find("Error code ");
        const std::size_t open = at == kNone ? kNone : whole_end(at + 11);
        if (open == kNone || m_text.compare(open, 2, " (") != 0) {
            return std::nullopt;
        }
        const std::size_t close = m_text.find(')', open + 2);
        if (close == kNone || close - open > 200) {
            return std::nullopt;
        }
        return std::string(m_text.substr(open + 2, close - open - 2));
    }

private:
    // The size "[0-9]+(.[0-9]+)? ?UNIT" that ends at `at`.
    std::optional<std::int64_t> size_ending(std::size_t at, const char* what) const {
        for (const Unit& unit : kUnits) {
            if (at < unit.name.size() + 1 ||
                m_lower.compare(at - unit.name.size(), unit.name.size(), unit.name) != 0) {
                continue;
            }
            std::size_t end = at - unit.name.size();
            end -= m_lower[end - 1] == ' ' ? 1 : 0;
            const std::size_t begin = digits_before(end);
            if (begin == end) {
                return std::nullopt;
            }
            return bytes(begin, at, unit.scale, what);
        }
        return std::nullopt;
    }

    // The size "[0-9]+(.[0-9]+)? ?UNIT" at `begin`, where `then` follows it.
    std::optional<std::int64_t> size_at(std::size_t begin, const char* what,
                                        std::string_view then) const {
        const std::size_t number = digits_from(begin);
        if (number == begin) {
            return std::nullopt;
        }
        const std::size_t unit = number + (number < m_lower.size() && m_lower[number] == ' ');
        const Unit* found = unit_at(unit);
        if (found == nullptr || !followed_by(unit + found->name.size(), then)) {
            return std::nullopt;
        }
        return bytes(begin, unit + found->name.size(), found->scale, what);
    }
    std::size_t find(std::string_view words, std::size_t from) const {
        return std::string_view(m_lower).find(words, from);
    }
    // `then` at `at`, and not as the start of a longer word.
    bool followed_by(std::size_t at, std::string_view then) const {
        const std::size_t end = at + then.size();
        return m_lower.compare(at, then.size(), then) == 0 &&
               (then.empty() || end >= m_lower.size() || !is_word(then.back()) ||
                !is_word(m_lower[end]));
    }
    const Unit* unit_at(std::size_t at) const {
        for (const Unit& unit : kUnits) {
            if (followed_by(at, unit.name)) {
                return &unit;
            }
        }
        return nullptr;
    }
    // The end of the number [0-9]+(\.[0-9]+)? that begins at `begin` (`begin` when none).
    std::size_t digits_from(std::size_t begin) const {
        std::size_t end = begin;
        while (end < m_text.size() && is_digit(m_text[end])) {
            ++end;
        }
        if (end > begin && end + 1 < m_text.size() && m_text[end] == '.' &&
            is_digit(m_text[end + 1])) {
            for (++end; end < m_text.size() && is_digit(m_text[end]);) {
                ++end;
            }
        }
        return end;
    }
    std::size_t whole_end(std::size_t begin) const {
        while (begin < m_text.size() && is_digit(m_text[begin])) {
            ++begin;
        }
        return begin;
    }
    // The start of that number ending at `end` (`end` when none).
    std::size_t digits_before(std::size_t end) const {
        std::size_t begin = end;
        while (begin > 0 && is_digit(m_text[begin - 1])) {
            --begin;
        }
        if (begin != end && begin >= 2 && m_text[begin - 1] == '.' && is_digit(m_text[begin - 2])) {
            for (--begin; begin > 0 && is_digit(m_text[begin - 1]);) {
                --begin;
            }
        }
        return begin;
    }
    // The number from `begin` to `end` times `scale`; one longer than any figure PyTorch prints
    // is refused, and one past any device's size (PyTorch has printed a counter gone below
    // zero as 17179869184.00 GiB) is set aside, said so in `set_aside`.
    std::optional<std::int64_t> bytes(std::size_t begin, std::size_t end, double scale,
                                      const char* what) const {
        const std::size_t number_end = digits_from(begin);
        const std::string_view token = m_text.substr(begin, end - begin);
        if (number_end - begin > kMostFigure) {
            throw BadInput(std::string(what) + ", \"" + shown(token) + "\" (a number of " +
                           std::to_string(number_end - begin) +
                           " characters), is longer than any figure PyTorch prints; this reader "
                           "takes numbers of at most " +
                           std::to_string(kMostFigure) + " characters");
        }
        double mantissa = 0;
        double divisor = 1;
        bool point = false;
        for (std::size_t i = begin; i < number_end; ++i) {
            if (m_text[i] == '.') {
                point = true;
                continue;
            }
            mantissa = mantissa * 10 + (m_text[i] - '0');
            divisor *= point ? 10 : 1;
        }
        const double value = mantissa / divisor * scale;
        if (!(value <= kMostBytes)) {
            m_set_aside.push_back(std::string(what) + ", \"" + shown(token) +
                                  "\", is more than 1 EiB, more than any device holds");
            return std::nullopt;
        }
        return static_cast<std::int64_t>(std::llround(value));
    }
    // The figures read that no device could hold, in words, each once.
    std::vector<std::string> set_aside() const {
        std::vector<std::string> unique;
        for (const std::string& item : m_set_aside) {
            if (std::find(unique.begin(), unique.end(), item) == unique.end()) {
                unique.push_back(item);
            }
        }
        return unique;
    }

    // The whole number from `begin` to `end`, from 0 to `most`.
    long long whole(std::size_t begin, std::size_t end, long long most, const char* what) const {
        long long value = 0;
        for (std::size_t i = begin; i < end; ++i) {
            if (value > (most - (m_text[i] - '0')) / 10) {
                throw BadInput(std::string(what) + ", \"" +
                               shown(m_text.substr(begin, end - begin)) +
                               "\", is out of range: expected a whole number from 0 to " +
                               std::to_string(most));
            }
            value = value * 10 + (m_text[i] - '0');
        }
        return value;
    }

    std::string_view m_text;
    std::string m_lower;
    mutable std::vector<std::string> m_set_aside;
};

}  // namespace oomlab::oom_figures
