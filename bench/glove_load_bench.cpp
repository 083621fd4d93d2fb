// Loads or generates a GloVe file and prints one JSON line, for bench/glove_load.sh.
//
//   oomlab-glove-bench load FILE [--no-cache] [--threads N] [--max-rows N] [--checksum]
//   oomlab-glove-bench synth --rows N --dim D [--seed S] --out FILE
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "oomlab/common/errors.h"
#include "oomlab/glove/glove_table.h"

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int usage() {
    std::fprintf(stderr,
                 "usage: oomlab-glove-bench load FILE [--no-cache] [--threads N] [--max-rows N] "
                 "[--checksum]\n"
                 "       oomlab-glove-bench synth --rows N --dim D [--seed S] --out FILE\n");
    return 2;
}

int load(const std::vector<std::string>& args) {
    std::string path;
    oomlab::GloveLoadOptions options;
    bool checksum = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& arg = args[i];
        const bool has_value = i + 1 < args.size();
        if (arg == "--no-cache") {
            options.cache = oomlab::GloveCacheMode::Off;
        } else if (arg == "--checksum") {
            checksum = true;
        } else if (arg == "--threads" && has_value) {
            options.threads = std::stoi(args[++i]);
        } else if (arg == "--max-rows" && has_value) {
            options.max_rows = std::stoll(args[++i]);
        } else if (path.empty() && arg.rfind("--", 0) != 0) {
            path = arg;
        } else {
            return usage();
        }
    }
    if (path.empty()) {
        return usage();
    }
    const auto start = std::chrono::steady_clock::now();
    const oomlab::GloveTable table = oomlab::GloveTable::load(path, options);
    const double load_seconds = seconds_since(start);
    std::printf(
        "{\"words\": %lld, \"dim\": %d, \"duplicates\": %lld, \"format\": \"%s\", "
        "\"from_cache\": %s, \"load_seconds\": %.4f",
        static_cast<long long>(table.size()), table.dim(),
        static_cast<long long>(table.duplicates()),
        std::string(oomlab::glove_format_name(table.format())).c_str(),
        table.from_cache() ? "true" : "false", load_seconds);
    if (checksum) {  // touches every value, so a mapped cache is really read
        const auto sum_start = std::chrono::steady_clock::now();
        double sum = 0.0;
        for (std::int64_t row = 0; row < table.size(); ++row) {
            const float* values = table.vector(row);
            for (int d = 0; d < table.dim(); ++d) {
                sum += values[d];
            }
        }
        std::printf(", \"checksum\": %.6f, \"checksum_seconds\": %.4f", sum,
                    seconds_since(sum_start));
    }
    std::printf("}\n");
    return 0;
}

int synth(const std::vector<std::string>& args) {
    long long rows = 0;
    int dim = 0;
    unsigned long long seed = 1;
    std::string out;
    for (std::size_t i = 0; i + 1 < args.size(); i += 2) {
        if (args[i] == "--rows") {
            rows = std::stoll(args[i + 1]);
        } else if (args[i] == "--dim") {
            dim = std::stoi(args[i + 1]);
        } else if (args[i] == "--seed") {
            seed = std::stoull(args[i + 1]);
        } else if (args[i] == "--out") {
            out = args[i + 1];
        } else {
            return usage();
        }
    }
    if (rows <= 0 || dim <= 0 || out.empty() || args.size() % 2 != 0) {
        return usage();
    }
    const auto start = std::chrono::steady_clock::now();
    const oomlab::GloveTable table = oomlab::GloveTable::synthesize(rows, dim, seed);
    const double synth_seconds = seconds_since(start);
    const auto write_start = std::chrono::steady_clock::now();
    table.write_text(out);
    std::printf(
        "{\"words\": %lld, \"dim\": %d, \"synthesize_seconds\": %.4f, "
        "\"write_seconds\": %.4f}\n",
        rows, dim, synth_seconds, seconds_since(write_start));
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        return usage();
    }
    const std::string command = argv[1];
    const std::vector<std::string> args(argv + 2, argv + argc);
    try {
        if (command == "load") {
            return load(args);
        }
        if (command == "synth") {
            return synth(args);
        }
        return usage();
    } catch (const oomlab::BadInput& error) {
        std::fprintf(stderr, "error: %s\n", error.what());
        return 2;
    } catch (const std::exception& error) {
        std::fprintf(stderr, "error: %s\n", error.what());
        return 1;
    }
}
