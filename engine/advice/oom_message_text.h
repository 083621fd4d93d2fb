// Where PyTorch's out-of-memory message is in a text (a traceback, a log of any length): the
// words each wording begins with, where the last message begins and ends, and the message as
// one line for its figures to be read (oom_message_reader.cpp). Every scan is linear.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "oomlab/advice/oom_message.h"

namespace oomlab::oom_text {

// The most a message runs on from its first words: figures after it are not its own.
inline constexpr std::size_t kMostMessage = 64 * 1024;

inline bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

// The words a wording begins with, and what they tell of the message.
struct Marker {
    std::string_view words;
    OomMessage::Device device;
    std::string_view backend = "CUDA";
    bool driver = false;
    // Words within a message rather than at its start: a message begins there only where no
    // other begins before it (a poster's copy that starts at them, a log that split the first).
    bool weak = false;
    // What failed, in words (OomMessage::failure); empty for the caching allocator's messages.
    std::string_view failure = {};
};

struct Span {
    std::size_t begin = 0;
    std::size_t end = 0;
};

// Whether `part` is a view into `text` (not a copy of some of it): pointers into different
// strings are compared with std::less, which orders them all.
inline bool lies_within(std::string_view text, std::string_view part) {
    const std::less<const char*> before;
    return !before(part.data(), text.data()) &&
           !before(text.data() + text.size(), part.data() + part.size());
}

// Where `words` next stand in `text` from `from`; npos where they do not.
std::size_t find_in(std::string_view text, std::string_view words, std::size_t from = 0);

// The last message of `text`, from its first words to its end (a blank line, the next
// traceback, or kMostMessage bytes on); none where `text` holds none.
std::optional<Span> last_message(std::string_view text);
// Where a text that holds no message (last_message finds none) holds a library's status as an
// issue's title writes it, in lower case ("cudnn_status_alloc_failed"), or the runtime's name for
// the error in PyTorch's hint ("Search for `cudaErrorMemoryAllocation'").
std::optional<Span> fallback_message(std::string_view text);

// What the text around a message tells of the program that printed it (oom_message_context.cpp):
// its platform and release by the paths in its traceback, an inference application's log, host
// memory being pinned where it failed, the settings' variable its own hint names, and what the
// program was doing (`message`: the message's text, within `text` or a copy of it).
void read_context(std::string_view text, std::string_view message, OomMessage& m);

// The marker `message` (a Span's text) begins with.
const Marker& marker_at_start(std::string_view message);

// The message with a console's hard wraps undone: a line broken at the console's width, inside
// a word or a number ("a to|tal capacity", "memory 4|0.30 GiB"), is one line again. The width is
// that of two or more of the message's lines, 60 columns or more, exactly as long. `message` is
// a view into `text` (whose lines it begins in) or a copy of it.
std::string without_hard_wraps(std::string_view text, std::string_view message);

// The message as one line, as its figures are read: each run of white space (a console's wrap,
// a log's box, sentences split by blank lines, a string's escaped "\\n") one space, without the
// "[rankN]:" torchrun puts before each line of a rank's output.
std::string one_line(std::string_view text);

}  // namespace oomlab::oom_text
