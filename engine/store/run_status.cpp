#include <array>
#include <utility>

#include "oomlab/store/run_store.h"

namespace oomlab {
namespace {

// The names stored in runs.status (the schema's CHECK constraint lists the same).
constexpr std::array<std::pair<RunStatus, std::string_view>, 6> kStatusNames = {{
    {RunStatus::Running, "running"},
    {RunStatus::Completed, "completed"},
    {RunStatus::Oom, "oom"},
    {RunStatus::Failed, "failed"},
    {RunStatus::Cancelled, "cancelled"},
    {RunStatus::Interrupted, "interrupted"},
}};

}  // namespace

std::string_view run_status_name(RunStatus status) {
    for (const auto& [value, name] : kStatusNames) {
        if (value == status) {
            return name;
        }
    }
    return "unknown";
}

std::optional<RunStatus> parse_run_status(std::string_view name) {
    for (const auto& [value, known] : kStatusNames) {
        if (known == name) {
            return value;
        }
    }
    return std::nullopt;
}

}  // namespace oomlab
