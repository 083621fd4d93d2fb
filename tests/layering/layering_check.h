// The layering the build declares, checked against every include of the sources: the manifest
// CMake writes (cmake/OomlabLayering.cmake) says what each engine component, workbench folder
// and program links; each `#include` must name a header of itself or of what it links.
#pragma once

#include <string>
#include <vector>

namespace oomlab::test {

// Every include of the sources under `root` that the manifest's declarations do not allow,
// as "FILE: includes \"HEADER\" ..., which ... does not link"; empty when all hold.
std::vector<std::string> layering_violations(const std::string& manifest_text,
                                             const std::string& root);

}  // namespace oomlab::test
