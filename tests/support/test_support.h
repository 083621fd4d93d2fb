// Helpers shared by the test suites.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace oomlab::test {

inline constexpr std::int64_t kMiB = std::int64_t{1} << 20;

// The batch setting of a test that trains in bf16 to see what bf16 does (a run completes, ranks
// agree, activations shrink), not the estimator's figures at a given size: a smaller run checks
// the same for less. (bf16 runs were a third of the suite's CPU while LibTorch's one-element-at-
// a-time products ran them on CPUs without AVX-512; the engine's own, bf16_products.h, now run
// them near fp32's pace.) A test that needs its batch (the estimator's moments at the peak, a
// cap's fixes) trains its bf16 runs half as wide instead: a quarter of the products.
inline const std::string kBf16Batch = "train.batch_size=8";

// `settings` and then half the default width of `model` (a transformer's d_model 128 and ffn
// 256, a bilstm's or bag's hidden 128): for a bf16 test that needs its batch (kBf16Batch).
inline std::vector<std::string> half_width(const std::string& model,
                                           std::vector<std::string> settings = {}) {
    if (model == "transformer") {
        settings.insert(settings.end(), {"model.d_model=64", "model.ffn=128"});
    } else {
        settings.push_back("model.hidden=64");
    }
    return settings;
}

// The project's own fixtures (tests/data).
std::string fixture(const std::string& name);

// ../shared/data beside the project; empty when absent. Use OOMLAB_REQUIRE_SHARED_DATA.
std::string shared_data_dir();

// Where this build put what the tests run or read. Only test_support.cpp is compiled with
// these folders, so no other test's object depends on where the tree was checked out (a
// clone elsewhere reuses the compiler cache's objects).
const char* cli_program();           // oomlab-cli
const char* failing_nvml_library();  // an NVML whose initialisation fails
const char* layering_manifest();     // the components and their dependencies, from CMake
const char* source_root();           // the project's sources

// Before the first process group when several ranks share this process (threads): turns
// off PyTorch 2.x's flight recorder, a process-wide record of collectives that two process
// groups recording at once corrupt (PyTorch 2.11 crashed in c10d::FlightRecorder about once
// in 15 runs of two ranks). The engine's ranks are processes of their own.
void share_process_between_ranks();

// A fresh empty folder under the system temp dir, removed when the object dies.
class TempDir {
public:
    TempDir();
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::string& path() const { return m_path; }
    std::string file(const std::string& name) const { return m_path + "/" + name; }

private:
    std::string m_path;
};

// Writes `content` to `path` byte for byte.
void write_file(const std::string& path, const std::string& content);

// Reads a whole file; empty when it cannot be read.
std::string read_text(const std::string& path);

// `text` as one word of a /bin/sh command line.
std::string shell_quote(const std::string& text);

struct CommandResult {
    int exit_code = -1;  // 128 + N when killed by signal N
    std::string out;
};

// Writes to `out` the snapshot tests/data/snapshots/SCRIPT builds field by field as PyTorch
// writes one (`options` after it): the script's exit status, or -1 when there is no python3 to
// run it (skip then).
int built_snapshot(const std::string& script, const std::string& out,
                   const std::string& options = "");

// Runs `command` with /bin/sh and captures its standard output.
CommandResult run_command(const std::string& command);

// Copies the database NAME of tests/support/make_test_database.sh (what it holds is said
// there) to `path`, with every file beside it that its runs left (runs.sqlite-wal, -shm,
// -reserve, -writers): from the folder the suite made it in once (OOMLAB_TEST_DATABASES, CTest's
// fixtures), or made here when the test runs on its own. Fails the current test if it cannot.
void copy_test_database(const std::string& name, const std::string& path);

// The Python pickle at `path` loaded with plain pickle.load and printed as JSON, or nullopt
// when no python3 is on the PATH. Fails the current test if Python cannot load it.
std::optional<std::string> pickle_as_json(const std::string& path);

}  // namespace oomlab::test

// Skips the current test with a clear message when the shared data is absent.
#define OOMLAB_REQUIRE_SHARED_DATA(file)                                               \
    do {                                                                               \
        if (::oomlab::test::shared_data_dir().empty()) {                               \
            GTEST_SKIP() << "shared data folder not found; skipping test on " << file; \
        }                                                                              \
    } while (0)
