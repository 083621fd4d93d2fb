// What oomlab-cli and the engine server (engine_server.h) say to each other over the server's
// Unix socket. The command: a header carrying its open files (SCM_RIGHTS), then a payload of
// numbers and strings. The server's answers: the copy's pid (0 and a reason when it declines),
// then how the copy ended.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

extern char** environ;

namespace oomlab::session::wire {

inline constexpr std::uint32_t kMagic = 0x4f4f4d31;  // "OOM1"
// The most open files a command hands over (one SCM_RIGHTS message holds at most 253).
inline constexpr std::size_t kMostDescriptors = 240;
// The largest payload read (arguments and environment): a header that says more is refused.
inline constexpr std::uint32_t kMostPayloadBytes = 16u << 20;

struct Header {
    std::uint32_t magic = kMagic;
    std::uint32_t payload_bytes = 0;
    std::uint32_t descriptors = 0;  // the command's open files, then its working folder
};

struct Command {
    std::vector<std::string> arguments;
    std::vector<std::string> environment;          // "NAME=value"
    std::vector<std::int32_t> descriptor_numbers;  // the number each handed file has
    std::vector<std::int32_t> close_on_exec;       // 1 where it has FD_CLOEXEC
    std::uint32_t umask = 022;
    std::uint64_t ignored_signals = 0;  // bit n-1: signal n is ignored (SIG_IGN)
    std::uint64_t blocked_signals = 0;  // bit n-1: signal n is blocked
};

struct Ending {
    std::int32_t signalled = 0;  // 1: `value` is the signal that ended it; 0: its exit code
    std::int32_t value = 0;
};

class Writer {
public:
    void number(std::uint64_t value) { m_bytes.append(reinterpret_cast<const char*>(&value), 8); }
    void text(const std::string& value) {
        number(value.size());
        m_bytes += value;
    }
    template <typename T>
    void list(const std::vector<T>& values) {
        number(values.size());
        for (const T& value : values) {
            put(value);
        }
    }
    const std::string& bytes() const { return m_bytes; }

private:
    void put(const std::string& value) { text(value); }
    void put(std::int32_t value) { number(static_cast<std::uint32_t>(value)); }
    std::string m_bytes;
};

// Reads what Writer wrote; throws std::runtime_error past the end.
class Reader {
public:
    explicit Reader(const std::string& bytes) : m_bytes(bytes) {}
    std::uint64_t number() {
        std::uint64_t value = 0;
        take(reinterpret_cast<char*>(&value), 8);
        return value;
    }
    std::string text() {
        std::string value(checked_count(1), '\0');
        take(value.data(), value.size());
        return value;
    }
    std::vector<std::string> texts() {
        std::vector<std::string> values(checked_count(8));
        for (std::string& value : values) {
            value = text();
        }
        return values;
    }
    std::vector<std::int32_t> numbers() {
        std::vector<std::int32_t> values(checked_count(8));
        for (std::int32_t& value : values) {
            value = static_cast<std::int32_t>(static_cast<std::uint32_t>(number()));
        }
        return values;
    }

private:
    // A count of items of at least `least_bytes` each that the rest of the payload can hold.
    std::size_t checked_count(std::size_t least_bytes) {
        const std::uint64_t count = number();
        if (count > (m_bytes.size() - m_at) / least_bytes) {
            throw std::runtime_error("a command's payload is cut short");
        }
        return static_cast<std::size_t>(count);
    }
    void take(char* out, std::size_t size) {
        if (size > m_bytes.size() - m_at) {
            throw std::runtime_error("a command's payload is cut short");
        }
        m_bytes.copy(out, size, m_at);
        m_at += size;
    }
    const std::string& m_bytes;
    std::size_t m_at = 0;
};

inline std::string encode(const Command& command) {
    Writer out;
    out.list(command.arguments);
    out.list(command.environment);
    out.list(command.descriptor_numbers);
    out.list(command.close_on_exec);
    out.number(command.umask);
    out.number(command.ignored_signals);
    out.number(command.blocked_signals);
    return out.bytes();
}

inline Command decode(const std::string& payload) {
    Reader in(payload);
    Command command;
    command.arguments = in.texts();
    command.environment = in.texts();
    command.descriptor_numbers = in.numbers();
    command.close_on_exec = in.numbers();
    command.umask = static_cast<std::uint32_t>(in.number());
    command.ignored_signals = in.number();
    command.blocked_signals = in.number();
    return command;
}

// This process's environment, "NAME=value" each.
inline std::vector<std::string> environment_of_this_process() {
    std::vector<std::string> entries;
    for (char** entry = environ; entry && *entry; ++entry) {
        entries.emplace_back(*entry);
    }
    return entries;
}

// The variables read while LibTorch and its libraries load (OpenMP's threads, the BLAS's
// kernels, the dynamic linker, the allocator, logging): a command whose values differ from the
// server's would not run as it would have alone.
inline bool read_when_loading(const std::string& entry) {
    static const char* const kPrefixes[] = {"OMP_",
                                            "GOMP_",
                                            "KMP_",
                                            "MKL_",
                                            "OPENBLAS_",
                                            "LD_",
                                            "MALLOC_",
                                            "GLIBC_TUNABLES=",
                                            "TORCH_CPP_LOG_LEVEL=",
                                            "OOMLAB_TRAIN_LIBRARY="};
    for (const char* prefix : kPrefixes) {
        if (entry.rfind(prefix, 0) == 0) {
            return true;
        }
    }
    return false;
}

}  // namespace oomlab::session::wire
