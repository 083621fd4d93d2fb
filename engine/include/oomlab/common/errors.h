// Typed errors thrown by the engine. The CLI maps them to exit codes, the GUI worker to a
// run status; nothing else needs to inspect message text.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace oomlab {

class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Bad input: a config key, a file, a command-line argument. The message names the key or
// "file:line" and says what to do. CLI exit code 2; no run is created.
class BadInput : public Error {
public:
    using Error::Error;
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

// "path:line: what" (line is 1-based; 0 leaves it out).
BadInput bad_input_at(const std::string& path, std::size_t line, const std::string& what);

}  // namespace oomlab
