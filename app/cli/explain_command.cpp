// `oomlab-cli explain`: what a PyTorch program's out-of-memory message says, and what to try.
#include <iostream>
#include <iterator>
#include <sstream>

#include "cli_context.h"
#include "oomlab/advice/oom_message.h"

namespace oomlab::cli {

void add_explain_command(CLI::App& app, int& exit_code) {
    auto* command = app.add_subcommand(
        "explain",
        "What a PyTorch out-of-memory message means and what to try (the message as arguments, "
        "or on standard input: python train.py 2>&1 | oomlab-cli explain)");
    auto words = std::make_shared<std::vector<std::string>>();
    command->add_option("MESSAGE", *words, "The error's text (default: standard input)");
    auto* json = command->add_flag("--json", "One JSON object");
    command->callback([=, &exit_code] {
        std::string text;
        if (words->empty() || (words->size() == 1 && words->front() == "-")) {
            text.assign(std::istreambuf_iterator<char>(std::cin), {});
        } else {
            for (const std::string& word : *words) {
                text += (text.empty() ? "" : " ") + word;
            }
        }
        const OomExplanation explanation = explain_oom_message(text);
        if (*json) {
            std::cout << oom_explanation_json(explanation) << '\n';
        } else {
            std::cout << explanation.summary << "\n\n";
            for (const std::string& fact : explanation.facts) {
                std::cout << "  " << fact << '\n';
            }
            std::cout << "\nTry, first first:\n";
            int number = 0;
            for (const std::string& step : explanation.tries) {
                std::cout << "  " << ++number << ". " << step << '\n';
            }
        }
        exit_code = kExitOk;
    });
}

}  // namespace oomlab::cli
