#include "json_snapshot.h"

#include <rapidjson/error/en.h>
#include <rapidjson/reader.h>

#include <cstdint>
#include <cstring>

#include "oomlab/common/errors.h"

namespace oomlab::snapshot {
namespace {

// The opcodes written, protocol 2's (pickletools names them so).
namespace op {
constexpr char kProto = '\x80', kStop = '.', kMark = '(', kEmptyDict = '}', kSetItems = 'u',
               kEmptyList = ']', kAppends = 'e', kBinUnicode = 'X', kNone = 'N', kNewTrue = '\x88',
               kNewFalse = '\x89', kLong1 = '\x8a', kBinFloat = 'G';
}  // namespace op

// rapidjson's reader calls it value by value: each becomes its opcodes as it is read, so no
// tree of the whole document is built (a 903 MB JSON took 8.3 GiB as nlohmann's tree).
class PickleWriter {
public:
    std::string take() { return std::move(m_out); }

    bool StartObject() { return open(op::kEmptyDict); }
    bool EndObject(rapidjson::SizeType) { return close(op::kSetItems); }
    bool StartArray() { return open(op::kEmptyList); }
    bool EndArray(rapidjson::SizeType) { return close(op::kAppends); }
    bool Key(const char* text, rapidjson::SizeType length, bool) {
        return String(text, length, true);
    }
    bool String(const char* text, rapidjson::SizeType length, bool) {
        m_out += op::kBinUnicode;
        little_endian(length, 4);
        m_out.append(text, length);
        return true;
    }
    bool Null() { return put(op::kNone); }
    bool Bool(bool value) { return put(value ? op::kNewTrue : op::kNewFalse); }
    bool Int(int value) { return integer(value, false); }
    bool Uint(unsigned value) { return integer(value, false); }
    bool Int64(std::int64_t value) { return integer(value, false); }
    // Up to 2**64 - 1, which snapshots hold.
    bool Uint64(std::uint64_t value) { return integer(std::int64_t(value), value > INT64_MAX); }
    bool Double(double value) { return real(value); }
    bool RawNumber(const char*, rapidjson::SizeType, bool) { return false; }  // not asked for

private:
    // A container's opcode, then a mark for its items; at its end the opcode that adds them
    // (an empty one adds none).
    bool open(char empty) {
        m_out += empty;
        m_out += op::kMark;
        return true;
    }
    bool close(char add) { return put(add); }
    bool put(char opcode) {
        m_out += opcode;
        return true;
    }

    // LONG1: the value's bytes, little-endian two's complement; `past_int64` where `value` is
    // an unsigned 64-bit number read as signed, which needs a ninth byte of 0.
    bool integer(std::int64_t value, bool past_int64) {
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
        return true;
    }

    bool real(double value) {  // BINFLOAT: big-endian
        std::uint64_t bits = 0;
        std::memcpy(&bits, &value, sizeof bits);
        m_out += op::kBinFloat;
        for (int shift = 56; shift >= 0; shift -= 8) {
            m_out += char((bits >> shift) & 0xFF);
        }
        return true;
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

std::size_t after_openings(const std::string& head, std::string_view openings) {
    std::size_t at = 0;
    for (const char opening : openings) {
        at = head.find_first_not_of(" \t\r\n", at);
        if (at == std::string::npos || head[at] != opening) {
            return std::string::npos;
        }
        ++at;
    }
    return head.find_first_not_of(" \t\r\n", at);
}

bool looks_like_json_trace_events(const std::string& head) {
    const std::size_t at = after_openings(head, "[{");
    return at != std::string::npos && head.compare(at, 8, "\"action\"") == 0;
}

std::string pickle_of_json_snapshot(const std::string& text, const std::string& source) {
    PickleWriter writer;
    rapidjson::Reader reader;
    rapidjson::StringStream stream(text.c_str());
    // Iterative: no recursion however deep; NaN and Infinity as Python's json writes them.
    constexpr unsigned kFlags = rapidjson::kParseIterativeFlag | rapidjson::kParseNanAndInfFlag;
    const rapidjson::ParseResult result = reader.Parse<kFlags>(stream, writer);
    if (result.IsError()) {
        throw BadInput(source + ": a memory snapshot saved as JSON, but not JSON at byte " +
                       std::to_string(result.Offset()) + " (" +
                       rapidjson::GetParseError_En(result.Code()) +
                       "); save it again with json.dump, or give the pickle");
    }
    return std::string{op::kProto, '\x02'} + writer.take() + op::kStop;
}

}  // namespace oomlab::snapshot
