// Typed errors thrown by the engine. The CLI maps them to exit codes, the GUI worker to a
// run status; nothing else needs to inspect message text.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace oomlab {

class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Bad input: a config key, a file, a command-line argument. The message names the key or
// "file:line" and says what to do; keys() lists the config keys it is about, so a form can
// mark them. CLI exit code 2; no run is created.
class BadInput : public Error {
public:
    explicit BadInput(const std::string& message, std::vector<std::string> keys = {})
        : Error(message), m_keys(std::move(keys)) {}
    ~BadInput() override;

    const std::vector<std::string>& keys() const { return m_keys; }

private:
    std::vector<std::string> m_keys;
};

// The training step ran out of (device or capped) memory. CLI exit code 3.
class OutOfMemory : public Error {
public:
    using Error::Error;
};

// The user asked to stop. CLI exit code 130.
class Cancelled : public Error {
public:
    Cancelled() : Error("cancelled") {}
};

// "path:line: what" (line is 1-based; 0 leaves it out), about the file that `keys` name.
BadInput bad_input_at(const std::string& path, std::size_t line, const std::string& what,
                      std::vector<std::string> keys = {});

}  // namespace oomlab
