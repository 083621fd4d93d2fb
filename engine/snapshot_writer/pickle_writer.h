// Writes Python pickle data (protocol 2) of plain values: dicts, lists, strings, integers,
// floats and booleans, the subset a memory snapshot uses. Python reads it with pickle.load and
// no classes, as it reads the snapshots PyTorch writes. (No C++ pickle library is packaged;
// LibTorch's own pickler is internal to its Python bindings.)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace oomlab::memory {

class PickleWriter {
public:
    PickleWriter();

    void begin_dict();
    void end_dict();
    void begin_list();
    void end_list();
    void value(std::string_view text);
    void value(const char* text) { value(std::string_view(text)); }
    void value(std::int64_t number);
    void value(double number);
    void value(bool flag);

    // A dict entry: the key, then exactly one value (or begin_dict/begin_list ... end_*).
    void key(std::string_view name) { value(name); }

    // The finished pickle; the writer must have written exactly one top-level value.
    std::string finish();

private:
    void opcode(unsigned char code) { m_out.push_back(static_cast<char>(code)); }
    void little_endian(std::uint64_t bits, int bytes);

    std::string m_out;
    std::vector<char> m_open;  // 'd' or 'l' for each container not yet ended
};

}  // namespace oomlab::memory
