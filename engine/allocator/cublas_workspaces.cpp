#include "oomlab/allocator/cublas_workspaces.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>

namespace oomlab::allocator {
namespace {

constexpr std::int64_t kKiB = 1024;
constexpr std::int64_t kHopperCublasWorkspace = 4096 * kKiB * 8;  // ":4096:8"
constexpr std::int64_t kCublasLtWorkspace = 1024 * kKiB;

std::optional<std::string_view> environment(const char* name) {
    const char* value = std::getenv(name);
    return value ? std::optional<std::string_view>(value) : std::nullopt;
}

// A decimal number at the front of `text`, which it then starts after.
std::optional<std::int64_t> take_number(std::string_view& text) {
    std::int64_t number = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
    if (error != std::errc() || end == text.data()) {
        return std::nullopt;
    }
    text.remove_prefix(static_cast<std::size_t>(end - text.data()));
    return number;
}

}  // namespace

std::optional<std::int64_t> parse_cublas_workspace_config(std::string_view value) {
    std::int64_t total = 0;
    bool found = false;
    // Every ":SIZE:COUNT" in the text, as PyTorch's regular expression finds them.
    for (std::size_t at = value.find(':'); at != std::string_view::npos;
         at = value.find(':', at + 1)) {
        std::string_view rest = value.substr(at + 1);
        const auto size = take_number(rest);
        if (!size || rest.empty() || rest.front() != ':') {
            continue;
        }
        rest.remove_prefix(1);
        if (const auto count = take_number(rest)) {
            total += *size * kKiB * *count;
            found = true;
            at = value.size() - rest.size() - 1;  // on past the pair
        }
    }
    return found ? std::optional<std::int64_t>(total) : std::nullopt;
}

CublasWorkspaces cublas_workspaces() {
    std::int64_t cublas = kHopperCublasWorkspace;
    if (const auto value = environment("CUBLAS_WORKSPACE_CONFIG")) {
        cublas = parse_cublas_workspace_config(*value).value_or(cublas);
    }
    std::int64_t cublas_lt = kCublasLtWorkspace;
    if (const auto value = environment("CUBLASLT_WORKSPACE_SIZE")) {
        std::string_view text = *value;
        cublas_lt = take_number(text).value_or(kCublasLtWorkspace / kKiB) * kKiB;
    }
    // PyTorch limits cuBLASLt's workspace to cuBLAS's.
    return {cublas, std::min(cublas_lt, cublas)};
}

}  // namespace oomlab::allocator
