// The main of a test program whose cases load the training engine: gtest's, in a copy of
// `PROGRAM engine-server FOLDER` where one serves this program (oomlab/session/engine_server.h;
// `./oomlab.sh test` starts one), so that its shards do not each load LibTorch.
#include <gtest/gtest.h>

#include "oomlab/session/engine_server.h"

namespace {

int run_tests(int argc, char** argv) {
    testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}

}  // namespace

int main(int argc, char** argv) {
    return oomlab::session::run_main(argc, argv, run_tests);
}
