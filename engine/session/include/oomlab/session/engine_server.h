// A process that has loaded the training engine once and starts each command given to it as a
// copy of itself (fork), for a test suite that starts hundreds of processes that train:
// loading LibTorch is most of a short command's CPU (half a second of Debian's, for a run of a
// second). oomlab-cli and the test programs that train (the workbench's, the training
// engine's) start through it: run_main below.
//
// With OOMLAB_ENGINE_SERVER=FOLDER in its environment, a program hands its command to its own
// server, listening at FOLDER/PROGRAM (PROGRAM: its executable's file name, started as
// `PROGRAM engine-server FOLDER`): its arguments, environment, folder, umask, signal
// dispositions and open files. The copy runs the command in their place and the handing
// process waits for it, passing on every signal it receives and ending as the copy ended (the
// same exit code or signal); killed, it takes the copy with it. A command runs in the server
// only where it would load the engine as the server did: the same program file, user,
// namespaces, control group, resource limits, processor cores, a priority no higher than the
// server's (the copy takes a lower one) and the variables read when LibTorch loads (OMP_*,
// LD_*, ...); anywhere else, and with no server, it runs in its own process as always.
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

namespace oomlab::session {

inline constexpr const char* kEngineServerVariable = "OOMLAB_ENGINE_SERVER";
inline constexpr const char* kEngineServerCommand = "engine-server";

// The main of a program that may start in a copy of its engine server: `PROGRAM engine-server
// FOLDER` serves (and each copy runs `run` on its command's arguments, then ends without the
// static destructors); with OOMLAB_ENGINE_SERVER set, the command is handed to the server and
// this process ends as its copy ended; otherwise, or where the server declines, `run` runs
// here.
int run_main(int argc, char** argv, int (*run)(int argc, char** argv));

// Serves at FOLDER/PROGRAM until SIGTERM, SIGINT or SIGHUP (or the death of the process that
// started it). Returns in each copy, set up as its command's process, with the command's
// arguments; returns nothing in the server when it stops. Throws Error if it cannot listen.
std::optional<std::vector<std::string>> serve_engine(const std::string& folder);

// The command's exit code once a server ran it; nothing where none is set, reachable or
// willing (the caller then runs it itself). A command ended by a signal ends this process by
// the same signal.
std::optional<int> run_in_engine_server(int argc, char** argv);

// Where this program's server listens in `folder`: FOLDER/PROGRAM.
std::string engine_server_socket(const std::string& folder);

}  // namespace oomlab::session
