// The layering CMake declares holds in every source file (see cmake/OomlabLayering.cmake), and
// the check finds what breaks it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "layering_check.h"
#include "test_support.h"

namespace oomlab::test {
namespace {

std::string read_text(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

void write_text(const std::string& path, const std::string& text) {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path) << text;
}

TEST(Layering, EveryIncludeIsOfWhatItsComponentLinks) {
    const std::string manifest = read_text(layering_manifest());
    ASSERT_NE(manifest.find("unit oomlab_distributed engine/distributed 1 0"), std::string::npos)
        << manifest;
    std::string report;
    for (const std::string& violation : layering_violations(manifest, source_root())) {
        report += violation + "\n";
    }
    EXPECT_EQ(report, "");
}

// A tree made for the test, with one break of each rule.
TEST(Layering, EachBreakOfTheRulesIsNamedWithWhereToDeclareIt) {
    TempDir root;
    const std::string manifest =
        "unit oomlab_common engine/common 0 0 |  | \n"
        "unit oomlab_config engine/config 0 0 | oomlab_common | oomlab_common\n"
        "unit oomlab_session engine/session 0 0 | oomlab_config | oomlab_config\n"
        "unit oomlab_store engine/store 0 0 | oomlab_common | oomlab_common\n"
        "unit oomlab_distributed engine/distributed 1 0 | oomlab_config | oomlab_config\n"
        "unit oomlab_ui ui 0 1 | oomlab_session | oomlab_session\n"
        "ui plots | common\n"
        "ui common | export\n"
        "ui live | plots\n"
        "ui export | live\n"
        "ui lessons | export\n"
        "ui window | lessons\n"
        "unit oomlab-cli app/cli 0 0 | oomlab_session | \n";
    // Allowed: its own headers, beside it or public, a component linked through another's
    // public link, torch in a torch component.
    write_text(root.file("engine/distributed/group.cpp"),
               "#include \"group.h\"\n#include <torch/types.h>\n"
               "#include \"oomlab/distributed/group.h\"\n#include \"oomlab/common/errors.h\"\n"
               "#include \"oomlab/session/experiment.h\"\n");
    write_text(root.file("engine/config/internal.h"), "");
    write_text(root.file("engine/config/include/oomlab/config/paths.h"), "");
    write_text(root.file("engine/config/include/oomlab/config/keys.h"),
               "#include <torch/torch.h>\n#include \"internal.h\"\n#include \"paths.h\"\n");
    write_text(root.file("engine/session/run.cpp"),
               "#include <QString>\n#include \"config/internal.h\"\n"
               "#include \"../config/internal.h\"\n");
    write_text(root.file("ui/plots/chart.cpp"),
               "#include <QString>\n#include \"common/text.h\"\n#include \"live/page.h\"\n");
    write_text(root.file("app/cli/main.cpp"),
               "#include \"cli_context.h\"\n#include \"store/sqlite.h\"\n"
               "#include \"oomlab/session/run.h\"\n");
    const std::string into_engine_folder =
        "a path into an engine folder: a component's private headers are included beside their "
        "sources, other components' by their oomlab/ header";
    EXPECT_EQ(
        layering_violations(manifest, root.path()),
        (std::vector<std::string>{
            "app/cli/main.cpp: includes \"store/sqlite.h\", " + into_engine_folder,
            "engine/config/include/oomlab/config/keys.h: includes \"torch/torch.h\", "
            "oomlab_config does not link LibTorch (oomlab_torch_component)",
            "engine/config/include/oomlab/config/keys.h: includes \"internal.h\", a private "
            "header in a public header: move it into include/oomlab/ too",
            "engine/distributed/group.cpp: includes \"oomlab/session/experiment.h\", of "
            "oomlab_session, which oomlab_distributed does not link (declare it in "
            "engine/distributed/CMakeLists.txt)",
            "engine/session/run.cpp: includes \"QString\", oomlab_session does not link Qt",
            "engine/session/run.cpp: includes \"config/internal.h\", " + into_engine_folder,
            "engine/session/run.cpp: includes \"../config/internal.h\", a path out of its "
            "folder: include the component's oomlab/ header",
            "ui/plots/chart.cpp: includes \"live/page.h\", of ui/live, which ui/plots does not "
            "link (declare it in ui/CMakeLists.txt)",
            "ui/CMakeLists.txt: the folders form a cycle: ui/plots -> ui/common -> ui/export -> "
            "ui/live -> ui/plots"}));
}

}  // namespace
}  // namespace oomlab::test
