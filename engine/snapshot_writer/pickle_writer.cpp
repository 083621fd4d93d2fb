#include "pickle_writer.h"

#include <stdexcept>

#include "oomlab/common/bit_cast.h"
#include "oomlab/common/pickle_opcodes.h"

namespace oomlab::memory {

using namespace pickle;  // the opcodes

PickleWriter::PickleWriter() {
    opcode(kProto);
    m_out.push_back('\x02');
}

void PickleWriter::little_endian(std::uint64_t bits, int bytes) {
    for (int i = 0; i < bytes; ++i) {
        m_out.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
    }
}

// Items go between a MARK and one SETITEMS/APPENDS, so a container costs three opcodes
// whatever its length.
void PickleWriter::begin_dict() {
    opcode(kEmptyDict);
    opcode(kMark);
    m_open.push_back('d');
}

void PickleWriter::end_dict() {
    if (m_open.empty() || m_open.back() != 'd') {
        throw std::logic_error("PickleWriter: end_dict without begin_dict");
    }
    m_open.pop_back();
    opcode(kSetItems);
}

void PickleWriter::begin_list() {
    opcode(kEmptyList);
    opcode(kMark);
    m_open.push_back('l');
}

void PickleWriter::end_list() {
    if (m_open.empty() || m_open.back() != 'l') {
        throw std::logic_error("PickleWriter: end_list without begin_list");
    }
    m_open.pop_back();
    opcode(kAppends);
}

void PickleWriter::value(std::string_view text) {
    opcode(kBinUnicode);
    little_endian(text.size(), 4);
    m_out.append(text);
}

void PickleWriter::value(std::int64_t number) {
    if (number >= INT32_MIN && number <= INT32_MAX) {
        opcode(kBinInt);
        little_endian(static_cast<std::uint32_t>(static_cast<std::int32_t>(number)), 4);
        return;
    }
    opcode(kLong1);
    m_out.push_back('\x08');
    little_endian(static_cast<std::uint64_t>(number), 8);
}

void PickleWriter::value(double number) {
    const auto bits = bit_cast<std::uint64_t>(number);
    opcode(kBinFloat);
    for (int i = 7; i >= 0; --i) {
        m_out.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
    }
}

void PickleWriter::value(bool flag) {
    opcode(flag ? kNewTrue : kNewFalse);
}

std::string PickleWriter::finish() {
    if (!m_open.empty()) {
        throw std::logic_error("PickleWriter: a dict or list was not ended");
    }
    opcode(kStop);
    return std::move(m_out);
}

}  // namespace oomlab::memory
