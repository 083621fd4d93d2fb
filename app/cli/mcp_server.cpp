#include "mcp_server.h"

#include <algorithm>
#include <exception>
#include <stdexcept>

#include "oomlab/common/json_parse.h"

namespace oomlab::cli::mcp {
namespace {

// JSON-RPC 2.0's error codes.
constexpr int kParseError = -32700;
constexpr int kInvalidRequest = -32600;
constexpr int kMethodNotFound = -32601;
constexpr int kInvalidParams = -32602;
constexpr int kInternalError = -32603;

// A message is a request of a few kilobytes (an OOM message, a path): one past this is read
// past, never held.
constexpr std::size_t kMostMessageBytes = 16u << 20;

class ProtocolError : public std::runtime_error {
public:
    ProtocolError(int code, const std::string& message)
        : std::runtime_error(message), m_code(code) {}
    int code() const { return m_code; }

private:
    int m_code;
};

Json error_reply(const Json& id, int code, const std::string& message) {
    return {{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}};
}

// One line of `in` into `line`, at most kMostMessageBytes of it (`too_long` says a longer one
// was read past); false at the end of the input.
bool read_message(std::istream& in, std::string& line, bool& too_long) {
    line.clear();
    too_long = false;
    std::streambuf* buffer = in.rdbuf();
    for (;;) {
        const int c = buffer->sbumpc();
        if (c == std::char_traits<char>::eof()) {
            return !line.empty() || too_long;
        }
        if (c == '\n') {
            return true;
        }
        if (line.size() < kMostMessageBytes) {
            line.push_back(static_cast<char>(c));
        } else {
            too_long = true;
        }
    }
}

bool has_type(const Json& value, const std::string& type) {
    if (type == "string") {
        return value.is_string();
    }
    if (type == "integer") {
        return value.is_number_integer();
    }
    return value.is_object();
}

// The arguments of a call held to the tool's own list: every one known, of its type, the
// required ones given.
void check_arguments(const Tool& tool, const Json& arguments) {
    const auto refuse = [&](const std::string& why) {
        throw ProtocolError(kInvalidParams, tool.name + ": " + why);
    };
    for (const auto& item : arguments.items()) {
        // Named, not a structured binding: C++17 lets no lambda capture one (clang refuses).
        const std::string& name = item.key();
        const Json& value = item.value();
        const auto known = std::find_if(tool.arguments.begin(), tool.arguments.end(),
                                        [&](const Argument& a) { return a.name == name; });
        if (known == tool.arguments.end()) {
            std::string names;
            for (const Argument& argument : tool.arguments) {
                names += (names.empty() ? "" : ", ") + argument.name;
            }
            refuse("no argument \"" + name + "\"; its arguments are " + names);
        }
        if (!has_type(value, known->type)) {
            refuse("\"" + name + "\" is " + std::string(value.type_name()) + ", not " +
                   (known->type == "integer" ? "an integer" : "a " + known->type));
        }
    }
    for (const Argument& argument : tool.arguments) {
        if (argument.required && !arguments.contains(argument.name)) {
            refuse("\"" + argument.name + "\" is required (" + argument.description + ")");
        }
    }
}

Json text_content(const std::string& text) {
    return Json::array({{{"type", "text"}, {"text", text}}});
}

}  // namespace

const std::vector<std::string>& protocol_versions() {
    static const std::vector<std::string> versions = {"2024-11-05", "2025-03-26", "2025-06-18",
                                                      "2025-11-25"};
    return versions;
}

Server::Server(std::string name, std::string version, std::string instructions,
               std::vector<Tool> tools)
    : m_name(std::move(name)),
      m_version(std::move(version)),
      m_instructions(std::move(instructions)),
      m_tools(std::move(tools)) {}

void Server::serve(std::istream& in, std::ostream& out) {
    std::string line;
    bool too_long = false;
    while (read_message(in, line, too_long)) {
        std::optional<Json> reply =
            too_long ? error_reply(nullptr, kParseError,
                                   "a message of more than 16 MiB; it was not read")
                     : answer(line);
        if (reply) {
            out << reply->dump(-1, ' ', false, Json::error_handler_t::replace) << '\n'
                << std::flush;
        }
    }
}

std::optional<Json> Server::answer(const std::string& message) {
    if (message.find_first_not_of(" \t\r") == std::string::npos) {
        return std::nullopt;  // a blank line between messages
    }
    Json request;
    try {
        request = parse_json_limited<Json>(message, "the message");
    } catch (const std::exception& error) {
        return error_reply(nullptr, kParseError, std::string("not JSON: ") + error.what());
    }
    if (!request.is_object()) {
        return error_reply(nullptr, kInvalidRequest,
                           "a message is one JSON-RPC 2.0 object (MCP has no batches)");
    }
    const auto id = request.find("id");
    const bool notification = id == request.end();
    if (!request.contains("method")) {
        return std::nullopt;  // a reply of the client's: this server asks nothing
    }
    const Json reply_id = notification ? Json(nullptr) : *id;
    const auto method = request.find("method");
    if (request.value("jsonrpc", "") != "2.0" || !method->is_string() ||
        (!notification && !id->is_string() && !id->is_number_integer())) {
        return notification ? std::nullopt
                            : std::optional(error_reply(
                                  id->is_string() || id->is_number_integer() ? reply_id : nullptr,
                                  kInvalidRequest,
                                  "a request has \"jsonrpc\": \"2.0\", a \"method\" and an id "
                                  "that is a string or a whole number"));
    }
    if (notification) {
        return std::nullopt;  // notifications/initialized, cancelled: nothing to do here
    }
    const Json params = request.value("params", Json::object());
    try {
        if (!params.is_object()) {
            throw ProtocolError(kInvalidParams, "\"params\" is an object");
        }
        return Json{{"jsonrpc", "2.0"},
                    {"id", reply_id},
                    {"result", result_of(method->get<std::string>(), params)}};
    } catch (const ProtocolError& error) {
        return error_reply(reply_id, error.code(), error.what());
    } catch (const std::exception& error) {
        return error_reply(reply_id, kInternalError, error.what());
    }
}

Json Server::result_of(const std::string& method, const Json& params) {
    if (method == "initialize") {
        // The client's revision where this server speaks it, else this server's newest: the
        // client then decides whether it can go on.
        const std::string asked = params.value("protocolVersion", "");
        const auto& versions = protocol_versions();
        const bool known = std::find(versions.begin(), versions.end(), asked) != versions.end();
        return {{"protocolVersion", known ? asked : versions.back()},
                {"capabilities", {{"tools", {{"listChanged", false}}}}},
                {"serverInfo", {{"name", m_name}, {"version", m_version}}},
                {"instructions", m_instructions}};
    }
    if (method == "ping") {
        return Json::object();
    }
    if (method == "tools/list") {
        return tool_list();
    }
    if (method == "tools/call") {
        return call_tool(params);
    }
    throw ProtocolError(kMethodNotFound, "no method \"" + method +
                                             "\": this server answers initialize, ping, "
                                             "tools/list and tools/call");
}

Json Server::tool_list() const {
    Json tools = Json::array();
    for (const Tool& tool : m_tools) {
        Json properties = Json::object();
        Json required = Json::array();
        for (const Argument& argument : tool.arguments) {
            properties[argument.name] = {{"type", argument.type},
                                         {"description", argument.description}};
            if (argument.required) {
                required.push_back(argument.name);
            }
        }
        tools.push_back({{"name", tool.name},
                         {"description", tool.description},
                         {"inputSchema",
                          {{"type", "object"},
                           {"properties", properties},
                           {"required", required},
                           {"additionalProperties", false}}}});
    }
    return {{"tools", tools}};
}

Json Server::call_tool(const Json& params) {
    const auto name = params.find("name");
    if (name == params.end() || !name->is_string()) {
        throw ProtocolError(kInvalidParams, "tools/call names its tool in \"name\"");
    }
    const auto tool = std::find_if(m_tools.begin(), m_tools.end(), [&](const Tool& t) {
        return t.name == name->get<std::string>();
    });
    if (tool == m_tools.end()) {
        std::string names;
        for (const Tool& t : m_tools) {
            names += (names.empty() ? "" : ", ") + t.name;
        }
        throw ProtocolError(kInvalidParams,
                            "no tool \"" + name->get<std::string>() + "\"; the tools are " + names);
    }
    const Json arguments = params.value("arguments", Json::object());
    if (!arguments.is_object()) {
        throw ProtocolError(kInvalidParams, tool->name + ": \"arguments\" is an object");
    }
    check_arguments(*tool, arguments);
    // What the tool itself refuses (a file that is not there, a snapshot that does not read)
    // is its answer, for the assistant to read: MCP's tool error, not the protocol's.
    try {
        const Json figures = tool->call(arguments);
        return {
            {"content", text_content(figures.dump(-1, ' ', false, Json::error_handler_t::replace))},
            {"structuredContent", figures},
            {"isError", false}};
    } catch (const std::bad_alloc&) {
        return {{"content", text_content(tool->name + ": out of memory")}, {"isError", true}};
    } catch (const std::exception& error) {
        return {{"content", text_content(error.what())}, {"isError", true}};
    }
}

}  // namespace oomlab::cli::mcp
