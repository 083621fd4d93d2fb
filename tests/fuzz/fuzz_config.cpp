// Config files and lesson files (the seeds hold both): any bytes give a valid config, or a
// lesson whose every run's settings are checked as `lesson check` checks them, or BadInput
// naming what is wrong.
#include <string>

#include "oomlab/common/errors.h"
#include "oomlab/config/config_io.h"
#include "oomlab/lessons/lesson.h"

namespace {

void read_as_config(const std::string& text) {
    try {
        const oomlab::ExperimentConfig config = oomlab::parse_config_json(text, "fuzz.json");
        oomlab::validate_config(config);
        // What is written must read back.
        oomlab::parse_config_json(oomlab::config_to_json(config), "again.json");
    } catch (const oomlab::BadInput&) {
    }
}

void read_as_lesson(const std::string& text) {
    try {
        const oomlab::Lesson lesson = oomlab::parse_lesson(text, "fuzz.json");
        for (const bool on_cuda : {false, true}) {
            for (const oomlab::LessonRun& run : lesson.runs) {
                oomlab::validate_config(oomlab::lesson_config(lesson, run, on_cuda));
            }
            oomlab::lesson_claims(lesson, on_cuda);
        }
    } catch (const oomlab::BadInput&) {
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    read_as_config(text);
    read_as_lesson(text);
    return 0;
}
