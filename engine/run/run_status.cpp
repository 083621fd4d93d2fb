#include <array>

#include "oomlab/common/name_table.h"
#include "oomlab/run/run_record.h"

namespace oomlab {
namespace {

// The names stored in runs.status (the schema's CHECK constraint lists the same).
constexpr std::array<NamedValue<RunStatus>, 6> kStatusNames = {{
    {RunStatus::Running, "running"},
    {RunStatus::Completed, "completed"},
    {RunStatus::Oom, "oom"},
    {RunStatus::Failed, "failed"},
    {RunStatus::Cancelled, "cancelled"},
    {RunStatus::Interrupted, "interrupted"},
}};

}  // namespace

std::string_view run_status_name(RunStatus status) {
    return name_of(status, kStatusNames, "unknown");
}

std::optional<RunStatus> parse_run_status(std::string_view name) {
    return value_named<RunStatus>(name, kStatusNames);
}

}  // namespace oomlab
