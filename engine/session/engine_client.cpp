// Handing a command to the engine server and standing in for its copy (engine_server.h).
#include "oomlab/session/engine_server.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "engine_wire.h"
#include "oomlab/common/errors.h"

namespace oomlab::session {
namespace {

volatile sig_atomic_t g_copy = 0;

void pass_on(int number) {
    if (g_copy > 0) {
        kill(static_cast<pid_t>(g_copy), number);
    }
}

// The signals passed on to the copy: all that can be caught but those a fault raises in this
// process, SIGCHLD, and the terminal's stops (this process stops as it would have).
bool passed_on(int number) {
    switch (number) {
        case SIGKILL:
        case SIGSTOP:
        case SIGCHLD:
        case SIGSEGV:
        case SIGBUS:
        case SIGILL:
        case SIGFPE:
        case SIGTRAP:
        case SIGSYS:
        case SIGTSTP:
        case SIGTTIN:
        case SIGTTOU:
            return false;
        default:
            return true;
    }
}

class Descriptor {
public:
    explicit Descriptor(int fd) : m_fd(fd) {}
    ~Descriptor() {
        if (m_fd >= 0) {
            close(m_fd);
        }
    }
    Descriptor(const Descriptor&) = delete;
    Descriptor& operator=(const Descriptor&) = delete;
    int get() const { return m_fd; }

private:
    int m_fd;
};

int connect_to(const char* path) {
    sockaddr_un address{};
    if (std::strlen(path) >= sizeof address.sun_path) {
        return -1;
    }
    address.sun_family = AF_UNIX;
    std::strcpy(address.sun_path, path);
    const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

bool read_all(int fd, void* data, std::size_t size) {
    auto* at = static_cast<char*>(data);
    while (size > 0) {
        const ssize_t got = read(fd, at, size);
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got <= 0) {
            return false;
        }
        at += got;
        size -= static_cast<std::size_t>(got);
    }
    return true;
}

bool write_all(int fd, const char* data, std::size_t size) {
    while (size > 0) {
        const ssize_t put = send(fd, data, size, MSG_NOSIGNAL);
        if (put < 0 && errno == EINTR) {
            continue;
        }
        if (put <= 0) {
            return false;
        }
        data += put;
        size -= static_cast<std::size_t>(put);
    }
    return true;
}

// This process's open files but the two of this hand-over, as the copy should have them.
bool list_open_files(int socket_fd, int folder_fd, wire::Command& command,
                     std::vector<int>& files) {
    DIR* folder = opendir("/proc/self/fd");
    if (!folder) {
        return false;
    }
    while (const dirent* entry = readdir(folder)) {
        const int fd = std::atoi(entry->d_name);
        if (entry->d_name[0] == '.' || fd == socket_fd || fd == folder_fd || fd == dirfd(folder)) {
            continue;
        }
        const int flags = fcntl(fd, F_GETFD);
        if (flags < 0) {
            continue;
        }
        files.push_back(fd);
        command.descriptor_numbers.push_back(fd);
        command.close_on_exec.push_back((flags & FD_CLOEXEC) ? 1 : 0);
    }
    closedir(folder);
    return files.size() < wire::kMostDescriptors;
}

bool send_command(int socket_fd, const wire::Command& command, const std::vector<int>& files) {
    const std::string payload = wire::encode(command);
    wire::Header header;
    header.payload_bytes = static_cast<std::uint32_t>(payload.size());
    header.descriptors = static_cast<std::uint32_t>(files.size());
    iovec part{&header, sizeof header};
    std::vector<char> control(CMSG_SPACE(sizeof(int) * files.size()));
    msghdr message{};
    message.msg_iov = &part;
    message.msg_iovlen = 1;
    message.msg_control = control.data();
    message.msg_controllen = control.size();
    cmsghdr* rights = CMSG_FIRSTHDR(&message);
    rights->cmsg_level = SOL_SOCKET;
    rights->cmsg_type = SCM_RIGHTS;
    rights->cmsg_len = CMSG_LEN(sizeof(int) * files.size());
    std::memcpy(CMSG_DATA(rights), files.data(), sizeof(int) * files.size());
    ssize_t sent = -1;
    do {
        sent = sendmsg(socket_fd, &message, MSG_NOSIGNAL);
    } while (sent < 0 && errno == EINTR);
    return sent == static_cast<ssize_t>(sizeof header) &&
           write_all(socket_fd, payload.data(), payload.size());
}

wire::Command describe_this_process(int argc, char** argv, const sigset_t& blocked) {
    wire::Command command;
    command.arguments.assign(argv, argv + argc);
    command.environment = wire::environment_of_this_process();
    const mode_t mask = umask(0);
    umask(mask);
    command.umask = mask;
    for (int number = 1; number <= 64; ++number) {
        struct sigaction action {};
        if (sigaction(number, nullptr, &action) == 0 && action.sa_handler == SIG_IGN) {
            command.ignored_signals |= std::uint64_t{1} << (number - 1);
        }
        if (sigismember(&blocked, number) == 1) {
            command.blocked_signals |= std::uint64_t{1} << (number - 1);
        }
    }
    return command;
}

// Ends this process as the copy ended.
int end_as(const wire::Ending& ending) {
    if (!ending.signalled) {
        return ending.value;
    }
    std::signal(ending.value, SIG_DFL);
    sigset_t only;
    sigemptyset(&only);
    sigaddset(&only, ending.value);
    sigprocmask(SIG_UNBLOCK, &only, nullptr);
    raise(ending.value);
    return 128 + ending.value;  // a signal whose default is not to end a process
}

}  // namespace

std::string engine_server_socket(const std::string& folder) {
    char program[4096] = {};
    const ssize_t size = readlink("/proc/self/exe", program, sizeof program - 1);
    const char* name = std::strrchr(program, '/');
    return folder + "/" + (size > 0 && name ? name + 1 : "unknown");
}

std::optional<int> run_in_engine_server(int argc, char** argv) {
    const char* servers = std::getenv(kEngineServerVariable);
    if (!servers || !*servers || (argc > 1 && std::strcmp(argv[1], kEngineServerCommand) == 0)) {
        return std::nullopt;
    }
    const std::string path = engine_server_socket(servers);
    const Descriptor server(connect_to(path.c_str()));
    if (server.get() < 0) {
        return std::nullopt;  // no server there (any more): run here
    }
    // Signals wait until there is a copy to pass them on to.
    sigset_t all;
    sigset_t before;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &before);
    const auto unblock = [&] { sigprocmask(SIG_SETMASK, &before, nullptr); };
    wire::Command command = describe_this_process(argc, argv, before);
    std::vector<int> files;
    const Descriptor folder(open(".", O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (folder.get() < 0 || !list_open_files(server.get(), folder.get(), command, files)) {
        unblock();
        return std::nullopt;
    }
    files.push_back(folder.get());
    std::int32_t copy = 0;
    if (!send_command(server.get(), command, files) ||
        !read_all(server.get(), &copy, sizeof copy)) {
        unblock();
        return std::nullopt;
    }
    if (copy <= 0) {
        unblock();
        return std::nullopt;  // declined (the server's log says why): run here
    }
    g_copy = copy;
    for (int number = 1; number < NSIG; ++number) {
        if (passed_on(number) && !(command.ignored_signals & (std::uint64_t{1} << (number - 1)))) {
            struct sigaction action {};
            action.sa_handler = pass_on;
            sigemptyset(&action.sa_mask);
            action.sa_flags = SA_RESTART;
            sigaction(number, &action, nullptr);
        }
    }
    unblock();
    wire::Ending ending;
    if (!read_all(server.get(), &ending, sizeof ending)) {
        std::fprintf(stderr, "error: the engine server (%s) ended before the command did\n",
                     path.c_str());
        return 1;
    }
    return end_as(ending);
}

int run_main(int argc, char** argv, int (*run)(int argc, char** argv)) {
    if (const std::optional<int> ended = run_in_engine_server(argc, argv)) {
        return *ended;
    }
    if (argc < 2 || std::strcmp(argv[1], kEngineServerCommand) != 0) {
        return run(argc, argv);
    }
    std::optional<std::vector<std::string>> command;
    try {
        if (argc != 3) {
            throw BadInput(std::string("usage: ") + argv[0] + " " + kEngineServerCommand +
                           " FOLDER");
        }
        command = serve_engine(argv[2]);
    } catch (const std::exception& error) {
        std::fprintf(stderr, "error: %s\n", error.what());
        return 1;
    }
    if (!command) {
        return 0;  // the server, stopped
    }
    std::vector<char*> arguments;
    for (std::string& argument : *command) {
        arguments.push_back(argument.data());
    }
    arguments.push_back(nullptr);
    const int exit_code = run(static_cast<int>(command->size()), arguments.data());
    // Ended without the static destructors: in a copy they are LibTorch's, unregistering every
    // operator (70 of the 110 ms a copy of `oomlab-cli runs list` took), which a process that
    // never loaded LibTorch does not run and one that did runs to no effect at its end.
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    _exit(exit_code);
}

}  // namespace oomlab::session
