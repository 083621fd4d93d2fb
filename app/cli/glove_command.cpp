// oomlab-cli glove info|convert|synth
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli_context.h"
#include "oomlab/common/errors.h"
#include "oomlab/common/files.h"
#include "oomlab/glove/glove_table.h"
#include "oomlab/glove/variants.h"

namespace oomlab::cli {
namespace {

void add_info(CLI::App& glove, int& exit_code) {
    auto* command = glove.add_subcommand("info", "Read a GloVe/word2vec file and describe it");
    auto file = std::make_shared<std::string>();
    command->add_option("FILE", *file, "GloVe or word2vec text file, or its cache")->required();
    auto* json = command->add_flag("--json", "One JSON object");
    auto* no_cache =
        command->add_flag("--no-cache", "Parse the text; neither read nor write a cache");
    command->callback([=, &exit_code] {
        GloveLoadOptions options;
        options.cache = *no_cache ? GloveCacheMode::Off : GloveCacheMode::ReadWrite;
        options.verify_vectors = false;  // describes the table; training checks the vectors
        options.what = "FILE";
        const GloveTable table = GloveTable::load(*file, options);
        if (*json) {
            nlohmann::ordered_json out = {{"file", *file},
                                          {"words", table.size()},
                                          {"dim", table.dim()},
                                          {"duplicates", table.duplicates()},
                                          {"format", glove_format_name(table.format())},
                                          {"from_cache", table.from_cache()},
                                          {"matrix_bytes", table.size() * table.dim() * 4}};
            std::cout << json_line(out) << '\n';
        } else {
            std::cout << *file << ": " << table.size() << " words x " << table.dim() << " ("
                      << glove_format_name(table.format()) << ", " << table.duplicates()
                      << " duplicated words, " << format_bytes(table.size() * table.dim() * 4)
                      << " as float32" << (table.from_cache() ? ", read from the cache" : "")
                      << ")\n";
        }
        exit_code = kExitOk;
    });
}

void add_convert(CLI::App& glove, int& exit_code) {
    auto* command = glove.add_subcommand("convert", "Write the binary cache of a text file");
    auto file = std::make_shared<std::string>();
    auto out = std::make_shared<std::string>();
    auto force = std::make_shared<bool>(false);
    command->add_option("FILE", *file, "GloVe or word2vec text file")->required();
    command->add_option("--out", *out, "Cache file (default: where loading looks for it)");
    command->add_flag("--force", *force, "Replace an existing file that is not a cache");
    command->callback([=, &exit_code] {
        const std::string target = out->empty() ? glove_cache_path(*file) : *out;
        check_output_path(target, {"--out", {*file}, *force, is_glove_cache});
        GloveLoadOptions options;
        options.cache = GloveCacheMode::Off;
        options.what = "FILE";
        const GloveTable table = GloveTable::load(*file, options);
        table.write_cache(target);
        std::cout << "wrote " << target << " (" << table.size() << " words x " << table.dim()
                  << ")\n";
        exit_code = kExitOk;
    });
}

void add_synth(CLI::App& glove, int& exit_code) {
    auto* command = glove.add_subcommand(
        "synth", "Write synthetic vectors with the exact shape of a GloVe variant");
    auto variant_name = std::make_shared<std::string>();
    auto out = std::make_shared<std::string>();
    auto seed = std::make_shared<std::uint64_t>(42);
    auto rows = std::make_shared<std::int64_t>(0);
    auto force = std::make_shared<bool>(false);
    command->add_option("VARIANT", *variant_name, "e.g. 6B.100d")->required();
    command->add_option("--out", *out, "GloVe text file to write")->required();
    command->add_option("--seed", *seed, "Random seed")->capture_default_str();
    command->add_option("--rows", *rows, "Fewer rows than the variant has (0: all)");
    command->add_flag("--force", *force, "Replace an existing file");
    command->callback([=, &exit_code] {
        const GloveVariant* variant = find_glove_variant(*variant_name);
        if (!variant) {
            throw BadInput("VARIANT: \"" + *variant_name + "\" is not a GloVe variant; expected " +
                           glove_variant_names());
        }
        if (*rows < 0) {
            throw BadInput("--rows: " + std::to_string(*rows) +
                           " is not valid; expected 0 (every row of the variant) or more");
        }
        // A text file cannot be told apart from a real GloVe download: never replaced
        // without --force.
        check_output_path(*out, {"--out", {}, *force, {}});
        const std::int64_t count = *rows > 0 ? std::min(*rows, variant->words) : variant->words;
        GloveTable::synthesize(count, variant->dim, *seed).write_text(*out);
        std::cout << "wrote " << *out << ": " << count << " synthetic words x " << variant->dim
                  << " (shape of GloVe " << variant->name << ")\n";
        exit_code = kExitOk;
    });
}

}  // namespace

void add_glove_command(CLI::App& app, int& exit_code) {
    auto* glove = app.add_subcommand("glove", "Inspect, convert and synthesise GloVe files");
    glove->require_subcommand(1);
    add_info(*glove, exit_code);
    add_convert(*glove, exit_code);
    add_synth(*glove, exit_code);
}

}  // namespace oomlab::cli
