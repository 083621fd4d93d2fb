// A process that has loaded the training engine once and starts each oomlab-cli command given
// to it as a copy of itself (fork), for a test suite that starts hundreds of them: loading
// LibTorch is most of a short command's CPU (half a second of Debian's, for a run of a second).
//
// `oomlab-cli` with OOMLAB_ENGINE_SERVER=SOCKET in its environment hands its command to the
// server listening there: its arguments, environment, folder, umask, signal dispositions and
// open files. The copy runs the command in their place and the handing process waits for it,
// passing on every signal it receives and ending as the copy ended (the same exit code or
// signal); killed, it takes the copy with it. A command runs in the server only where it would
// load the engine as the server did: the same program file, user, namespaces, control group,
// resource limits, scheduling and the variables read when LibTorch loads (OMP_*, LD_*, ...);
// anywhere else, and with no server, it runs in its own process as always.
//
// What a copy does not share with a process of its own: its parent is the server, not the
// process that started the command (which waits instead); /proc/PID/environ shows the server's
// environment (getenv sees the command's); and killed by SIGKILL, the starting process is gone
// a moment before its copy (the server ends it once it sees the connection close). A test
// that looks at the process tree, or at what a SIGKILL left, runs its command alone
// (OOMLAB_ENGINE_SERVER unset).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace oomlab::cli {

inline constexpr const char* kEngineServerVariable = "OOMLAB_ENGINE_SERVER";
inline constexpr const char* kEngineServerCommand = "engine-server";

// Serves at `socket_path` until SIGTERM, SIGINT or SIGHUP (or the death of the process that
// started it). Returns in each copy, set up as its command's process, with the command's
// arguments; returns nothing in the server when it stops. Throws Error if it cannot listen.
std::optional<std::vector<std::string>> serve_engine(const std::string& socket_path);

// The command's exit code once a server ran it; nothing where none is set, reachable or
// willing (the caller then runs it itself). A command ended by a signal ends this process by
// the same signal.
std::optional<int> run_in_engine_server(int argc, char** argv);

}  // namespace oomlab::cli
