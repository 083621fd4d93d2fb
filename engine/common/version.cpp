#include "oomlab/common/version.h"

namespace oomlab {

std::string engine_version() {
    return OOMLAB_VERSION;
}

}  // namespace oomlab
