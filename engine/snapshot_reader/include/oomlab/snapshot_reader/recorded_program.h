// The program a memory record came from. `oomlab-cli record` writes, beside each record, the
// command it ran, the folder it ran in and how the run ended (RECORD.program.json), so that the
// same program can be run again with another allocator setting later: `oomlab-cli record
// --after RECORD --try CONF`, or the workbench's "Run it" beside the replay.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace oomlab {

struct RecordedProgram {
    std::vector<std::string> command;  // the program and its arguments
    std::string directory;             // where it ran
    int exit_code = 0;
    double seconds = 0;  // how long it ran
};

// "RECORD.program.json".
std::string recorded_program_path(const std::string& record);

// Throws BadInput unless the program beside `record` can be written: a file there that is not
// one is replaced only with `force` (check_output_path's rules).
void check_recorded_program_path(const std::string& record, bool force);

// Written atomically; throws Error naming the path.
void write_recorded_program(const std::string& record, const RecordedProgram& program);

// The program beside `record`; nullopt when there is no such file. Throws BadInput naming the
// file and the key when it is not one `record` wrote.
std::optional<RecordedProgram> read_recorded_program(const std::string& record);

}  // namespace oomlab
