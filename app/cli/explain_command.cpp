// `oomlab-cli explain`: what a PyTorch program's out-of-memory message says, and what to try.
#include <iostream>
#include <string_view>
#include <vector>

#include "cli_context.h"
#include "oomlab/advice/oom_message.h"

namespace oomlab::cli {

void print_oom_explanation(const OomExplanation& explanation) {
    std::cout << explanation.summary << "\n\n";
    for (const std::string& fact : explanation.facts) {
        std::cout << "  " << fact << '\n';
    }
    std::cout << "\nTry, in this order:\n";
    int number = 0;
    for (const std::string& step : explanation.tries) {
        std::cout << "  " << ++number << ". " << step << '\n';
    }
}

void add_explain_command(CLI::App& app, int& exit_code) {
    auto* command = app.add_subcommand(
        "explain",
        "What a PyTorch out-of-memory message means and what to try (the message as arguments, "
        "or on standard input: python train.py 2>&1 | oomlab-cli explain)");
    auto words = std::make_shared<std::vector<std::string>>();
    command->add_option("MESSAGE", *words, "The error's text (default: standard input)");
    auto* json = command->add_flag("--json", "One JSON object");
    command->callback([=, &exit_code] {
        OomLogReader reader;
        if (words->empty() || (words->size() == 1 && words->front() == "-")) {
            // A whole training log may come down the pipe: read in pieces, keep what can matter.
            std::vector<char> piece(64 * 1024);
            while (std::cin.read(piece.data(), static_cast<std::streamsize>(piece.size())) ||
                   std::cin.gcount() > 0) {
                reader.feed(
                    std::string_view(piece.data(), static_cast<std::size_t>(std::cin.gcount())));
            }
        } else {
            for (std::size_t i = 0; i < words->size(); ++i) {
                reader.feed(i == 0 ? "" : " ");
                reader.feed((*words)[i]);
            }
        }
        const OomExplanation explanation = reader.explain();
        if (*json) {
            std::cout << oom_explanation_json(explanation) << '\n';
        } else {
            print_oom_explanation(explanation);
        }
        exit_code = kExitOk;
    });
}

}  // namespace oomlab::cli
