#include "oomlab/common/utf8.h"

#include <algorithm>
#include <cstdint>

#include "oomlab/common/errors.h"

namespace oomlab {

std::size_t invalid_utf8_offset(std::string_view text) {
    std::size_t i = 0;
    while (i < text.size()) {
        const auto lead = static_cast<unsigned char>(text[i]);
        int length = 0;
        std::uint32_t code = 0;
        if (lead < 0x80) {
            ++i;
            continue;
        } else if (lead >= 0xC2 && lead <= 0xDF) {
            length = 2;
            code = lead & 0x1F;
        } else if (lead >= 0xE0 && lead <= 0xEF) {
            length = 3;
            code = lead & 0x0F;
        } else if (lead >= 0xF0 && lead <= 0xF4) {
            length = 4;
            code = lead & 0x07;
        } else {
            return i;
        }
        if (i + length > text.size()) {
            return i;
        }
        for (int k = 1; k < length; ++k) {
            const auto next = static_cast<unsigned char>(text[i + k]);
            if ((next & 0xC0) != 0x80) {
                return i;
            }
            code = (code << 6) | (next & 0x3F);
        }
        const bool overlong = (length == 3 && code < 0x800) || (length == 4 && code < 0x10000);
        if (overlong || (code >= 0xD800 && code <= 0xDFFF) || code > 0x10FFFF) {
            return i;
        }
        i += length;
    }
    return std::string_view::npos;
}

std::string repaired_utf8(std::string_view text) {
    std::string repaired;
    repaired.reserve(text.size());
    while (!text.empty()) {
        const std::size_t bad = invalid_utf8_offset(text);
        if (bad == std::string_view::npos) {
            repaired += text;
            break;
        }
        repaired += text.substr(0, bad);
        repaired += "\xEF\xBF\xBD";  // U+FFFD
        text.remove_prefix(bad + 1);
    }
    return repaired;
}

void require_utf8(std::string_view text, const std::string& what, std::string_view advice) {
    const std::size_t bad = invalid_utf8_offset(text);
    if (bad == std::string_view::npos) {
        return;
    }
    std::string message =
        what + ": the value is not valid UTF-8 (byte " + std::to_string(bad + 1) + ")";
    if (!advice.empty()) {
        message += "; ";
        message += advice;
    }
    throw BadInput(message, {what});
}

namespace {

bool is_control(char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
}

// The controls of more than one byte, each made one '?' in valid UTF-8: C1 controls
// (U+0080-U+009F) and the marks that turn text's direction (U+200E, U+200F, U+202A-U+202E,
// U+2066-U+2069), which make a name read otherwise than it is.
std::string without_wide_controls(const std::string& text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        const auto byte = [&](std::size_t at) {
            return at < text.size() ? static_cast<unsigned char>(text[at]) : 0;
        };
        const unsigned b0 = byte(i), b1 = byte(i + 1), b2 = byte(i + 2);
        if (b0 == 0xC2 && b1 >= 0x80 && b1 <= 0x9F) {
            out += '?';
            i += 1;
        } else if (b0 == 0xE2 &&
                   ((b1 == 0x80 && (b2 == 0x8E || b2 == 0x8F || (b2 >= 0xAA && b2 <= 0xAE))) ||
                    (b1 == 0x81 && b2 >= 0xA6 && b2 <= 0xA9))) {
            out += '?';
            i += 2;
        } else {
            out += text[i];
        }
    }
    return out;
}

}  // namespace

std::string printable_line(std::string_view text) {
    std::string line = without_wide_controls(repaired_utf8(text));
    std::replace_if(line.begin(), line.end(), is_control, '?');
    return line;
}

std::string printable_text(std::string_view text) {
    std::string lines = without_wide_controls(repaired_utf8(text));
    std::replace_if(
        lines.begin(), lines.end(), [](char c) { return c != '\n' && is_control(c); }, '?');
    return lines;
}

std::string quoted_excerpt(std::string_view text) {
    constexpr std::size_t kShown = 60;
    if (text.size() <= kShown) {
        return "\"" + printable_line(text) + "\"";
    }
    std::size_t cut = kShown;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) {
        --cut;  // not inside a character
    }
    return "\"" + printable_line(text.substr(0, cut)) + "…\" (" + std::to_string(text.size()) +
           " bytes)";
}

void require_one_line(std::string_view text, const std::string& what) {
    require_utf8(text, what);
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (is_control(text[i])) {
            const auto byte = static_cast<unsigned char>(text[i]);
            throw BadInput(what + ": control character " + std::to_string(byte) + " at byte " +
                               std::to_string(i + 1) +
                               " (a line break, tab or escape); it must be one line of text",
                           {what});
        }
    }
}

}  // namespace oomlab
