#include "json_snapshot.h"

#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>

#include "oomlab/common/errors.h"

namespace oomlab::snapshot {
namespace {

using Json = nlohmann::json;

// The opcodes written, protocol 2's (pickletools names them so).
namespace op {
constexpr char kProto = '\x80', kStop = '.', kMark = '(', kEmptyDict = '}', kSetItems = 'u',
               kEmptyList = ']', kAppends = 'e', kBinUnicode = 'X', kNone = 'N', kNewTrue = '\x88',
               kNewFalse = '\x89', kLong1 = '\x8a', kBinFloat = 'G';
}  // namespace op

class PickleWriter {
public:
    std::string take() { return std::move(m_out); }

    void value(const Json& json) {
        switch (json.type()) {
            case Json::value_t::object:
                m_out += op::kEmptyDict;
                if (!json.empty()) {
                    m_out += op::kMark;
                    for (const auto& [key, item] : json.items()) {
                        text(key);
                        value(item);
                    }
                    m_out += op::kSetItems;
                }
                return;
            case Json::value_t::array:
                m_out += op::kEmptyList;
                if (!json.empty()) {
                    m_out += op::kMark;
                    for (const Json& item : json) {
                        value(item);
                    }
                    m_out += op::kAppends;
                }
                return;
            case Json::value_t::string:
                return text(json.get_ref<const std::string&>());
            case Json::value_t::boolean:
                m_out += json.get<bool>() ? op::kNewTrue : op::kNewFalse;
                return;
            case Json::value_t::number_integer:
                return integer(json.get<std::int64_t>(), false);
            case Json::value_t::number_unsigned:  // up to 2**64 - 1, which snapshots hold
                return integer(std::int64_t(json.get<std::uint64_t>()),
                               json.get<std::uint64_t>() > std::uint64_t(INT64_MAX));
            case Json::value_t::number_float:
                return real(json.get<double>());
            default:
                m_out += op::kNone;
        }
    }

private:
    void text(const std::string& value) {
        m_out += op::kBinUnicode;
        little_endian(std::uint64_t(value.size()), 4);
        m_out += value;
    }

    // LONG1: the value's bytes, little-endian two's complement; `past_int64` where `value` is
    // an unsigned 64-bit number read as signed, which needs a ninth byte of 0.
    void integer(std::int64_t value, bool past_int64) {
        std::string bytes;
        std::uint64_t bits = std::uint64_t(value);
        for (int i = 0; i < 8; ++i, bits >>= 8) {
            bytes += char(bits & 0xFF);
        }
        if (past_int64) {
            bytes += '\0';
        } else {  // the fewest bytes that keep the sign
            while (bytes.size() > 1) {
                const char last = bytes.back(), before = bytes[bytes.size() - 2];
                const bool sign_kept = (last == '\0' && (before & 0x80) == 0) ||
                                       (last == '\xFF' && (before & 0x80) != 0);
                if (!sign_kept) {
                    break;
                }
                bytes.pop_back();
            }
        }
        m_out += op::kLong1;
        m_out += char(bytes.size());
        m_out += bytes;
    }

    void real(double value) {  // BINFLOAT: big-endian
        std::uint64_t bits = 0;
        std::memcpy(&bits, &value, sizeof bits);
        m_out += op::kBinFloat;
        for (int shift = 56; shift >= 0; shift -= 8) {
            m_out += char((bits >> shift) & 0xFF);
        }
    }

    void little_endian(std::uint64_t value, int bytes) {
        for (int i = 0; i < bytes; ++i, value >>= 8) {
            m_out += char(value & 0xFF);
        }
    }

    std::string m_out;
};

}  // namespace

bool looks_like_json_snapshot(const std::string& head) {
    std::size_t at = head.find_first_not_of(" \t\r\n");
    if (at == std::string::npos || head[at] != '{') {
        return false;
    }
    at = head.find_first_not_of(" \t\r\n", at + 1);
    if (at == std::string::npos) {
        return false;
    }
    for (const char* key : {"\"segments\"", "\"device_traces\"", "\"allocator_settings\"",
                            "\"external_annotations\""}) {
        if (head.compare(at, std::strlen(key), key) == 0) {
            return true;
        }
    }
    return false;
}

std::string pickle_of_json_snapshot(const std::string& text, const std::string& source) {
    Json document;
    try {
        document = Json::parse(text);
    } catch (const Json::parse_error& error) {
        throw BadInput(source + ": a memory snapshot saved as JSON, but not JSON at byte " +
                       std::to_string(error.byte) +
                       "; save it again with json.dump, or give the pickle");
    }
    PickleWriter writer;
    std::string out;
    out += op::kProto;
    out += '\x02';
    writer.value(document);
    out += writer.take();
    out += op::kStop;
    return out;
}

}  // namespace oomlab::snapshot
