// A Model Context Protocol server on standard input and output, as the MCP specification's
// stdio transport has it: JSON-RPC 2.0, one message a line. The handshake (initialize), ping,
// tools/list and tools/call, so that an AI assistant can call OOM Lab's analyses and get their
// figures. Nothing else is offered: no resources, prompts or sampling.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <istream>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace oomlab::cli::mcp {

using Json = nlohmann::ordered_json;

// One argument of a tool, as its JSON schema says it.
struct Argument {
    std::string name;
    std::string type;  // "string", "integer" or "object"
    std::string description;
    bool required = false;
};

// A tool: its answer is a JSON object of figures. BadInput or Error from `call` is the tool's
// own error (isError), told to the assistant in the message's words.
struct Tool {
    std::string name;
    std::string description;
    std::vector<Argument> arguments;
    std::function<Json(const Json& arguments)> call;
};

// The protocol revisions of the initialize handshake answered, oldest first.
const std::vector<std::string>& protocol_versions();

class Server {
public:
    Server(std::string name, std::string version, std::string instructions,
           std::vector<Tool> tools);

    // Answers the messages of `in` on `out` until `in` ends.
    void serve(std::istream& in, std::ostream& out);

    // The answer to one message; none for a notification.
    std::optional<Json> answer(const std::string& message);

private:
    Json result_of(const std::string& method, const Json& params);
    Json call_tool(const Json& params);
    Json tool_list() const;

    std::string m_name;
    std::string m_version;
    std::string m_instructions;
    std::vector<Tool> m_tools;
};

}  // namespace oomlab::cli::mcp
