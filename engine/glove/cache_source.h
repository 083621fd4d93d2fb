// What identifies one version of a GloVe text file, recorded in its cache.
#pragma once

#include "oomlab/common/files.h"

namespace oomlab::glove_detail {

using CacheSource = FileStamp;

}  // namespace oomlab::glove_detail
