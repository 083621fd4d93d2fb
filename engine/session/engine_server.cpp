// The engine server: load the engine once, then a copy of this process for each command
// (engine_server.h).
#include "oomlab/session/engine_server.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>

#include "engine_wire.h"
#include "oomlab/common/errors.h"
#include "oomlab/session/training_backend.h"

namespace oomlab::session {
namespace {

std::string file_text(const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

bool same_file(const std::string& mine, const std::string& theirs) {
    struct stat a {};
    struct stat b {};
    return stat(mine.c_str(), &a) == 0 && stat(theirs.c_str(), &b) == 0 && a.st_dev == b.st_dev &&
           a.st_ino == b.st_ino;
}

std::vector<std::string> loading_variables(const std::vector<std::string>& environment) {
    std::vector<std::string> chosen;
    std::copy_if(environment.begin(), environment.end(), std::back_inserter(chosen),
                 wire::read_when_loading);
    std::sort(chosen.begin(), chosen.end());
    return chosen;
}

// Why the command of process `peer` would not run here as it would alone; empty if it would.
// `own_loading_variables`: the server's, as loading_variables gives them. `their_nice`: set
// to the peer's priority, which its copy takes.
std::string declined_because(const ucred& peer, const wire::Command& command,
                             const std::vector<std::string>& own_loading_variables,
                             int& their_nice) {
    if (peer.uid != getuid() || peer.gid != getgid()) {
        return "another user";
    }
    const std::string theirs = "/proc/" + std::to_string(peer.pid);
    if (!same_file("/proc/self/exe", theirs + "/exe")) {
        return "another program file";
    }
    for (const char* space : {"cgroup", "ipc", "mnt", "net", "pid", "time", "user", "uts"}) {
        const std::string mine = std::string("/proc/self/ns/") + space;
        if (access(mine.c_str(), F_OK) == 0 && !same_file(mine, theirs + "/ns/" + space)) {
            return std::string("another ") + space + " namespace";
        }
    }
    if (file_text("/proc/self/cgroup") != file_text(theirs + "/cgroup")) {
        return "another control group";
    }
    for (int resource = 0; resource < RLIMIT_NLIMITS; ++resource) {
        rlimit mine{};
        rlimit their_limit{};
        const auto which = static_cast<__rlimit_resource>(resource);
        if (prlimit(0, which, nullptr, &mine) != 0 ||
            prlimit(peer.pid, which, nullptr, &their_limit) != 0 ||
            mine.rlim_cur != their_limit.rlim_cur || mine.rlim_max != their_limit.rlim_max) {
            return "other resource limits (limit " + std::to_string(resource) + ")";
        }
    }
    cpu_set_t my_cores;
    cpu_set_t their_cores;
    if (sched_getaffinity(0, sizeof my_cores, &my_cores) != 0 ||
        sched_getaffinity(peer.pid, sizeof their_cores, &their_cores) != 0 ||
        !CPU_EQUAL(&my_cores, &their_cores)) {
        return "other processor cores";
    }
    // A lower priority the copy takes (become_the_command); a higher one it could not.
    errno = 0;
    const int my_nice = getpriority(PRIO_PROCESS, 0);
    their_nice = getpriority(PRIO_PROCESS, static_cast<id_t>(peer.pid));
    if (their_nice < my_nice || errno != 0) {
        return "a higher priority";
    }
    if (loading_variables(command.environment) != own_loading_variables) {
        return "other variables read when LibTorch loads (OMP_*, LD_*, ...)";
    }
    return "";
}

bool receive_command(int connection, wire::Command& command, std::vector<int>& files) {
    wire::Header header;
    iovec part{&header, sizeof header};
    std::vector<char> control(CMSG_SPACE(sizeof(int) * (wire::kMostDescriptors + 1)));
    msghdr message{};
    message.msg_iov = &part;
    message.msg_iovlen = 1;
    message.msg_control = control.data();
    message.msg_controllen = control.size();
    if (recvmsg(connection, &message, MSG_CMSG_CLOEXEC | MSG_WAITALL) !=
        static_cast<ssize_t>(sizeof header)) {
        return false;
    }
    for (cmsghdr* part_of = CMSG_FIRSTHDR(&message); part_of;
         part_of = CMSG_NXTHDR(&message, part_of)) {
        if (part_of->cmsg_level == SOL_SOCKET && part_of->cmsg_type == SCM_RIGHTS) {
            const std::size_t count = (part_of->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            files.resize(count);
            std::memcpy(files.data(), CMSG_DATA(part_of), count * sizeof(int));
        }
    }
    const bool whole =
        header.magic == wire::kMagic && header.payload_bytes <= wire::kMostPayloadBytes;
    std::string payload(whole ? header.payload_bytes : 0, '\0');
    if (!whole || (message.msg_flags & MSG_CTRUNC) || files.size() != header.descriptors ||
        recv(connection, payload.data(), payload.size(), MSG_WAITALL) !=
            static_cast<ssize_t>(payload.size())) {
        return false;
    }
    try {
        command = wire::decode(payload);
    } catch (const std::runtime_error&) {
        return false;
    }
    return command.descriptor_numbers.size() + 1 == files.size() &&
           command.close_on_exec.size() == command.descriptor_numbers.size() &&
           !command.arguments.empty();
}

// The pages of the server's mapped files (the engine's libraries) that its page tables hold.
// A copy starts without them (fork copies no entries of a file mapping it has not written), so
// its resident memory, which a CPU run reports as the process's memory beyond its tensors,
// would be 90 MB short of what the same command shows alone; the copy reads one byte of each.
struct ResidentPages {
    std::vector<std::pair<std::uintptr_t, std::uintptr_t>> ranges;  // [first, last) addresses
};

ResidentPages resident_file_pages() {
    ResidentPages resident;
    const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
    std::ifstream maps("/proc/self/maps");
    std::FILE* pagemap = std::fopen("/proc/self/pagemap", "rb");
    std::string line;
    while (pagemap && std::getline(maps, line)) {
        std::uintptr_t first = 0;
        std::uintptr_t last = 0;
        char permissions[5] = {};
        unsigned long long inode = 0;
        if (std::sscanf(line.c_str(), "%zx-%zx %4s %*x %*s %llu", &first, &last, permissions,
                        &inode) != 4 ||
            inode == 0 || permissions[0] != 'r') {
            continue;  // not a readable mapping of a file
        }
        std::vector<std::uint64_t> entries((last - first) / page);
        if (std::fseek(pagemap, static_cast<long>(first / page * 8), SEEK_SET) != 0 ||
            std::fread(entries.data(), 8, entries.size(), pagemap) != entries.size()) {
            continue;
        }
        for (std::size_t i = 0; i < entries.size(); ++i) {
            if (!(entries[i] >> 63)) {  // bit 63: present
                continue;
            }
            const std::uintptr_t at = first + i * page;
            if (!resident.ranges.empty() && resident.ranges.back().second == at) {
                resident.ranges.back().second = at + page;
            } else {
                resident.ranges.emplace_back(at, at + page);
            }
        }
    }
    if (pagemap) {
        std::fclose(pagemap);
    }
    return resident;
}

// Reads whole pages, the bytes between a library's variables too: not a fault, though the
// address sanitizer would call it one.
__attribute__((no_sanitize("address"))) void touch(const ResidentPages& resident) {
    const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
    for (const auto& [first, last] : resident.ranges) {
        for (std::uintptr_t at = first; at < last; at += page) {
            (void)*reinterpret_cast<const volatile char*>(at);
        }
    }
}

// Closes every open file of this process but `kept`: in a copy, the server's socket and its
// connections to other starters.
void close_all_but(const std::vector<int>& kept) {
    DIR* folder = opendir("/proc/self/fd");
    if (!folder) {
        _exit(126);
    }
    std::vector<int> open_now;
    while (const dirent* entry = readdir(folder)) {
        const int fd = std::atoi(entry->d_name);
        if (entry->d_name[0] != '.' && fd != dirfd(folder) &&
            std::find(kept.begin(), kept.end(), fd) == kept.end()) {
            open_now.push_back(fd);
        }
    }
    closedir(folder);
    for (const int fd : open_now) {
        close(fd);
    }
}

// In the copy: everything of the server's that a process of its own would not have, replaced
// by the command's.
void become_the_command(const wire::Command& command, const std::vector<int>& files, pid_t server,
                        const ResidentPages& resident, int nice) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != server) {
        _exit(127);
    }
    if (setpriority(PRIO_PROCESS, 0, nice) != 0) {
        _exit(126);
    }
    setpgid(0, 0);  // not in the server's group, which its starter may signal
    // The handed files, moved above every number they take, then to those numbers.
    int above = 3;
    for (const int number : command.descriptor_numbers) {
        above = std::max(above, number + 1);
    }
    std::vector<int> moved;
    for (const int file : files) {
        moved.push_back(fcntl(file, F_DUPFD_CLOEXEC, above));
    }
    if (std::find(moved.begin(), moved.end(), -1) != moved.end() || fchdir(moved.back()) != 0) {
        _exit(126);
    }
    close_all_but(moved);
    for (std::size_t i = 0; i < command.descriptor_numbers.size(); ++i) {
        const int number = command.descriptor_numbers[i];
        if (dup2(moved[i], number) < 0 ||
            fcntl(number, F_SETFD, command.close_on_exec[i] ? FD_CLOEXEC : 0) < 0) {
            _exit(126);
        }
    }
    for (const int fd : moved) {
        close(fd);
    }
    umask(static_cast<mode_t>(command.umask));
    clearenv();
    for (const std::string& entry : command.environment) {
        putenv(strdup(entry.c_str()));  // putenv keeps the string: never freed
    }
    sigset_t blocked;
    sigemptyset(&blocked);
    for (int number = 1; number <= 64 && number < NSIG; ++number) {
        const std::uint64_t bit = std::uint64_t{1} << (number - 1);
        if (number != SIGKILL && number != SIGSTOP) {
            std::signal(number, (command.ignored_signals & bit) ? SIG_IGN : SIG_DFL);
        }
        if (command.blocked_signals & bit) {
            sigaddset(&blocked, number);
        }
    }
    touch(resident);
    sigprocmask(SIG_SETMASK, &blocked, nullptr);
}

double seconds(const timeval& time) {
    return static_cast<double>(time.tv_sec) + static_cast<double>(time.tv_usec) / 1e6;
}

class EngineServer {
public:
    explicit EngineServer(const std::string& socket_path) : m_path(socket_path) {
        sockaddr_un address{};
        if (m_path.size() >= sizeof address.sun_path) {
            throw BadInput("the engine server's socket path " + m_path + " is longer than " +
                           std::to_string(sizeof address.sun_path - 1) + " bytes");
        }
        address.sun_family = AF_UNIX;
        std::strcpy(address.sun_path, m_path.c_str());
        m_listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        unlink(m_path.c_str());
        if (m_listener < 0 ||
            bind(m_listener, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
            listen(m_listener, 64) != 0) {
            throw Error("cannot listen at " + m_path + ": " + std::strerror(errno));
        }
        sigset_t handled;
        sigemptyset(&handled);
        for (const int number : {SIGCHLD, SIGTERM, SIGINT, SIGHUP}) {
            sigaddset(&handled, number);
        }
        sigprocmask(SIG_BLOCK, &handled, nullptr);
        m_signals = signalfd(-1, &handled, SFD_CLOEXEC | SFD_NONBLOCK);
    }
    ~EngineServer() {
        if (getpid() == m_pid) {
            unlink(m_path.c_str());
        }
    }
    EngineServer(const EngineServer&) = delete;
    EngineServer& operator=(const EngineServer&) = delete;

    // Returns in a copy with its command's arguments; in the server when it is told to stop.
    std::optional<std::vector<std::string>> serve() {
        for (;;) {
            std::vector<pollfd> watched{{m_listener, POLLIN, 0}, {m_signals, POLLIN, 0}};
            for (const auto& [connection, copy] : m_copies) {
                watched.push_back({connection, POLLIN, 0});
            }
            if (poll(watched.data(), watched.size(), -1) < 0) {
                continue;  // EINTR
            }
            if ((watched[1].revents & POLLIN) && !reap_copies()) {
                stop();
                return std::nullopt;
            }
            for (std::size_t i = 2; i < watched.size(); ++i) {
                // Its starter went away: the copy goes too (unless it ended and was reaped
                // above, its connection closed with it).
                const auto starter = m_copies.find(watched[i].fd);
                if (watched[i].revents && starter != m_copies.end()) {
                    kill(starter->second, SIGKILL);  // reaped with the others
                    close(starter->first);
                    m_copies.erase(starter);
                }
            }
            if (watched[0].revents & POLLIN) {
                if (auto arguments = take_command()) {
                    return arguments;
                }
            }
        }
    }

private:
    // Reports each copy that ended to its starter; false once told to stop.
    bool reap_copies() {
        signalfd_siginfo information{};
        bool told_to_stop = false;
        while (read(m_signals, &information, sizeof information) ==
               static_cast<ssize_t>(sizeof information)) {
            told_to_stop = told_to_stop || information.ssi_signo != SIGCHLD;
        }
        int status = 0;
        pid_t ended = 0;
        rusage used{};
        while ((ended = wait4(-1, &status, WNOHANG, &used)) > 0) {
            std::cerr << "ended pid " << ended << " after " << seconds(used.ru_utime)
                      << " s of user time and " << seconds(used.ru_stime) << " s of system\n";
            for (auto it = m_copies.begin(); it != m_copies.end(); ++it) {
                if (it->second == ended) {
                    wire::Ending ending;
                    ending.signalled = WIFSIGNALED(status) ? 1 : 0;
                    ending.value = WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status);
                    send(it->first, &ending, sizeof ending, MSG_NOSIGNAL);
                    close(it->first);
                    m_copies.erase(it);
                    break;
                }
            }
        }
        return !told_to_stop;
    }

    std::optional<std::vector<std::string>> take_command() {
        const int connection = accept4(m_listener, nullptr, nullptr, SOCK_CLOEXEC);
        if (connection < 0) {
            return std::nullopt;
        }
        const timeval patience{5, 0};  // a starter hands its command over at once
        setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof patience);
        ucred peer{};
        socklen_t size = sizeof peer;
        wire::Command command;
        std::vector<int> files;
        std::string refusal = "an unreadable command";
        int nice = 0;
        if (getsockopt(connection, SOL_SOCKET, SO_PEERCRED, &peer, &size) == 0 &&
            receive_command(connection, command, files)) {
            refusal = declined_because(peer, command, m_loading_variables, nice);
        }
        const std::string what = command.arguments.size() > 1 ? command.arguments[1] : "";
        pid_t copy = 0;
        if (refusal.empty()) {
            std::fflush(nullptr);
            copy = fork();
            if (copy == 0) {
                become_the_command(command, files, m_pid, m_resident, nice);
                return command.arguments;
            }
            if (copy < 0) {
                refusal = std::string("cannot start a copy: ") + std::strerror(errno);
            }
        }
        for (const int file : files) {
            close(file);
        }
        // A refusal is logged before the starter hears it: the command then runs alone and
        // may have ended before this process writes its next line.
        if (!refusal.empty()) {
            std::cerr << "declined " << what << " of pid " << peer.pid << ": " << refusal << '\n';
        }
        const std::int32_t answer = copy > 0 ? copy : 0;
        if (send(connection, &answer, sizeof answer, MSG_NOSIGNAL) != sizeof answer && copy > 0) {
            std::cerr << "declined " << what << " of pid " << peer.pid
                      << ": its starter went away\n";
            kill(copy, SIGKILL);
            copy = 0;
        }
        if (copy == 0) {
            close(connection);
            return std::nullopt;
        }
        std::string line;
        for (const std::string& argument : command.arguments) {
            line += (line.empty() ? "" : " ") + argument;
        }
        std::cerr << "ran " << what << " of pid " << peer.pid << " as pid " << copy << ": "
                  << line.substr(0, 300) << '\n';
        m_copies[connection] = copy;
        return std::nullopt;
    }

    void stop() {
        for (const auto& [connection, copy] : m_copies) {
            kill(copy, SIGKILL);
            close(connection);
        }
        m_copies.clear();
    }

    std::string m_path;
    pid_t m_pid = getpid();
    ResidentPages m_resident = resident_file_pages();
    std::vector<std::string> m_loading_variables =
        loading_variables(wire::environment_of_this_process());
    int m_listener = -1;
    int m_signals = -1;
    std::map<int, pid_t> m_copies;  // by the connection of the process that started each
};

std::size_t thread_count() {
    std::size_t count = 0;
    if (DIR* tasks = opendir("/proc/self/task")) {
        while (const dirent* entry = readdir(tasks)) {
            count += entry->d_name[0] != '.';
        }
        closedir(tasks);
    }
    return count;
}

}  // namespace

std::optional<std::vector<std::string>> serve_engine(const std::string& folder) {
    const std::string socket_path = engine_server_socket(folder);
    const pid_t starter = getppid();
    prctl(PR_SET_PDEATHSIG, SIGTERM);  // ends with what started it
    if (getppid() != starter) {
        return std::nullopt;
    }
    training_backend();
    // fork() copies only the calling thread: another one holding a lock would hold it forever
    // in every copy.
    if (const std::size_t threads = thread_count(); threads != 1) {
        throw Error("loading the engine started " + std::to_string(threads - 1) +
                    " other thread(s), which a copy of this process would not have; the BLAS "
                    "and OpenMP start theirs at load with more than one thread: start the server "
                    "with OMP_NUM_THREADS=1");
    }
    EngineServer server(socket_path);
    std::cerr << "serving at " << socket_path << '\n';
    return server.serve();
}

}  // namespace oomlab::session
