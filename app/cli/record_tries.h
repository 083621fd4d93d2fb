// `oomlab-cli record --try CONF`: the program run again with another allocator setting
// (PYTORCH_CUDA_ALLOC_CONF, nothing else changed), each run's memory recorded, and what each
// reached printed side by side beside what the first run's what-if had predicted for it.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "oomlab/snapshot_reader/snapshot_report.h"
#include "record_program.h"

namespace oomlab::cli {

// The settings `--try` asks for: each as given, "advice" for the allocator settings the first
// run's advice names. Refuses one PyTorch would refuse, naming --try.
std::vector<std::string> settings_to_try(const std::vector<std::string>& asked,
                                         const RecordedOutcome& first);

// Runs `program` again with each setting in turn (its record beside --out as NAME-try-N),
// each stopped after its timeout, and prints the table of all runs, the first included. Every
// try's files are checked first, as --out's are: none of the user's is replaced unless `force`.
void run_tries(const RecordedRun& program, const std::filesystem::path& out,
               const RecordedOutcome& first, const std::vector<std::string>& settings, bool force);

}  // namespace oomlab::cli
