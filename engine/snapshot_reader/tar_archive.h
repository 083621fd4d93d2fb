// A tar archive given where a snapshot or a trace was expected (param's dlrm_kineto.tar.gz packs
// 8 ranks' traces): told by its header, and refused naming its files, so that one is extracted.
#pragma once

#include <string>

#include "pickle_reader.h"

namespace oomlab::snapshot {

// The first bytes of the (unpacked) file: a tar archive's first header says "ustar" at 257.
bool looks_like_tar(const std::string& head);

// Throws BadInput naming `source`: a tar archive (`gzipped` or not), its files (as many as the
// first 64 MiB of `input` list) and how to extract one.
[[noreturn]] void refuse_tar(PickleInput& input, const std::string& source, bool gzipped);

}  // namespace oomlab::snapshot
