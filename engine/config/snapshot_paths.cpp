#include "oomlab/config/snapshot_paths.h"

#include <filesystem>
#include <string_view>

#include "oomlab/common/errors.h"

namespace oomlab {
namespace {

constexpr std::string_view kRun = "{run}";
constexpr std::string_view kRank = "{rank}";

std::string replace_all(std::string text, std::string_view from, const std::string& to) {
    for (std::size_t at = text.find(from); at != std::string::npos;
         at = text.find(from, at + to.size())) {
        text.replace(at, from.size(), to);
    }
    return text;
}

// "folder/snap.pickle" + ".rank{rank}" -> "folder/snap.rank{rank}.pickle"; the folder is kept
// as written (dots in folder names are not extensions).
std::string insert_before_extension(const std::string& path, const std::string& text) {
    const std::filesystem::path file(path);
    const std::string name = file.filename().string();
    const std::string extension = file.filename().extension().string();
    if (name.empty() || name == "." || name == "..") {
        return path;  // a folder, not a file: left for the path check to refuse
    }
    const std::string folder = path.substr(0, path.size() - name.size());
    return folder + name.substr(0, name.size() - extension.size()) + text + extension;
}

}  // namespace

void check_snapshot_placeholders(std::string_view key, std::string_view path) {
    for (std::size_t at = path.find_first_of("{}"); at != std::string_view::npos;
         at = path.find_first_of("{}", at)) {
        const std::string_view rest = path.substr(at);
        std::size_t length = 0;
        for (const std::string_view placeholder : {kRun, kRank}) {
            if (rest.substr(0, placeholder.size()) == placeholder) {
                length = placeholder.size();
            }
        }
        if (length == 0) {
            const std::size_t close = rest.find('}');
            const std::string_view written = rest[0] == '{' && close != std::string_view::npos
                                                 ? rest.substr(0, close + 1)
                                                 : rest.substr(0, 1);
            throw BadInput(std::string(key) + "=" + std::string(path) + ": \"" +
                           std::string(written) + "\" at character " + std::to_string(at + 1) +
                           " is not a placeholder; the name may hold {run} (the run's id) and "
                           "{rank} (the process's rank), and no other braces");
        }
        at += length;
    }
}

std::string snapshot_path_for_rank(const std::string& path, int rank, int world_size) {
    std::string named = path;
    if (world_size > 1 && !path.empty() && path.find(kRank) == std::string::npos) {
        named = insert_before_extension(path, ".rank" + std::string(kRank));
    }
    return replace_all(named, kRank, std::to_string(rank));
}

std::string snapshot_path_for_run(const std::string& path, std::int64_t run_id) {
    return replace_all(path, kRun, std::to_string(run_id));
}

std::string snapshot_path_per_run(const std::string& path) {
    if (path.empty() || path.find(kRun) != std::string::npos) {
        return path;
    }
    return insert_before_extension(path, ".run" + std::string(kRun));
}

}  // namespace oomlab
