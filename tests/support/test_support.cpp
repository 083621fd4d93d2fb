#include "test_support.h"

#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>

namespace fs = std::filesystem;

namespace oomlab::test {

std::string fixture(const std::string& name) {
    return std::string(OOMLAB_TEST_DATA_DIR) + "/" + name;
}

std::string shared_data_dir() {
    const fs::path dir = OOMLAB_SHARED_DATA_DIR;
    return fs::is_directory(dir) ? fs::canonical(dir).string() : std::string();
}

const char* cli_program() {
    return OOMLAB_CLI_PATH;
}

const char* failing_nvml_library() {
    return OOMLAB_FAILING_NVML;
}

const char* layering_manifest() {
    return OOMLAB_LAYERING_MANIFEST;
}

const char* source_root() {
    return OOMLAB_SOURCE_ROOT;
}

void share_process_between_ranks() {
    setenv("TORCH_FR_BUFFER_SIZE", "0", /*overwrite=*/0);
}

TempDir::TempDir() {
    std::random_device entropy;
    const fs::path base = fs::temp_directory_path();
    for (int attempt = 0; attempt < 100; ++attempt) {
        fs::path candidate = base / ("oomlab-test-" + std::to_string(entropy()));
        if (fs::create_directory(candidate)) {
            m_path = candidate.string();
            return;
        }
    }
    throw std::runtime_error("cannot create a temporary folder");
}

TempDir::~TempDir() {
    std::error_code ignored;
    fs::remove_all(m_path, ignored);
}

void write_file(const std::string& path, const std::string& content) {
    std::ofstream out(path, std::ios::binary);
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    if (!out) {
        throw std::runtime_error("cannot write " + path);
    }
}

std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string shell_quote(const std::string& text) {
    std::string result = "'";
    for (char c : text) {
        result += c == '\'' ? std::string("'\\''") : std::string(1, c);
    }
    return result + "'";
}

int built_snapshot(const std::string& script, const std::string& out, const std::string& options) {
    if (run_command("command -v python3 >/dev/null 2>&1").exit_code != 0) {
        return -1;
    }
    return run_command("python3 " +
                       shell_quote(std::string(source_root()) + "/tests/data/snapshots/" + script) +
                       " " + shell_quote(out) + " " + options)
        .exit_code;
}

CommandResult run_command(const std::string& command) {
    CommandResult result;
    FILE* pipe = popen(command.c_str(), "r");
    if (!pipe) {
        return result;
    }
    char buffer[65536];
    while (std::size_t count = std::fread(buffer, 1, sizeof buffer, pipe)) {
        result.out.append(buffer, count);
    }
    const int status = pclose(pipe);
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return result;
}

void copy_test_database(const std::string& name, const std::string& path) {
    std::optional<TempDir> made_here;
    std::string folder;
    if (const char* made = std::getenv("OOMLAB_TEST_DATABASES"); made && *made) {
        folder = made;
    } else {
        made_here.emplace();
        folder = made_here->path();
        const CommandResult made_now = run_command(
            shell_quote(std::string(source_root()) + "/tests/support/make_test_database.sh") + " " +
            shell_quote(cli_program()) + " " + shell_quote(folder) + " " + shell_quote(name) +
            " 2>&1");
        ASSERT_EQ(made_now.exit_code, 0) << made_now.out;
    }
    const fs::path made = fs::path(folder) / name;
    ASSERT_TRUE(fs::is_regular_file(made / "runs.sqlite")) << made << " has no runs.sqlite";
    // Every file the run left as it left it (runs.sqlite-wal, -shm, -reserve, -writers): a
    // database without its log's index beside it opens otherwise on a read-only mount.
    const std::string database = "runs.sqlite";
    for (const fs::directory_entry& file : fs::directory_iterator(made)) {
        const std::string file_name = file.path().filename().string();
        if (file_name.rfind(database, 0) == 0) {
            fs::copy_file(file.path(), path + file_name.substr(database.size()),
                          fs::copy_options::overwrite_existing);
        }
    }
}

std::optional<std::string> pickle_as_json(const std::string& path) {
    if (run_command("command -v python3 >/dev/null 2>&1").exit_code != 0) {
        return std::nullopt;
    }
    // Plain pickle.load, no torch: what the snapshot's readers (memory_viz's tooling) do.
    const CommandResult loaded = run_command(
        "python3 -c 'import json, pickle, sys; "
        "print(json.dumps(pickle.load(open(sys.argv[1], \"rb\"))))' " +
        shell_quote(path) + " 2>&1");
    EXPECT_EQ(loaded.exit_code, 0) << "python3 could not load " << path << ": " << loaded.out;
    return loaded.out;
}

}  // namespace oomlab::test
