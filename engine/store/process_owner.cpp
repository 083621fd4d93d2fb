#include "process_owner.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

namespace oomlab::store {
namespace {

struct ProcStat {
    char state = '?';
    std::int64_t start_ticks = 0;
};

// /proc/<pid>/stat is "pid (comm) state ppid ...". comm may hold spaces and parentheses,
// so fields are counted from the last ')'.
std::optional<ProcStat> read_proc_stat(std::int64_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    const std::string line{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    const auto comm_end = line.rfind(')');
    if (comm_end == std::string::npos) {
        return std::nullopt;
    }
    std::istringstream fields(line.substr(comm_end + 1));
    ProcStat stat;
    fields >> stat.state;  // field 3
    std::string skipped;
    for (int field = 4; field < 22; ++field) {
        fields >> skipped;
    }
    fields >> stat.start_ticks;  // field 22
    if (!fields) {
        return std::nullopt;
    }
    return stat;
}

bool proc_available() {
    return read_proc_stat(getpid()).has_value();
}

std::string host_name() {
    char buffer[256] = {};
    if (gethostname(buffer, sizeof buffer - 1) != 0) {
        return std::string();
    }
    return buffer;
}

}  // namespace

ProcessOwner current_process() {
    ProcessOwner self;
    self.host = host_name();
    self.pid = getpid();
    self.start_ticks = process_start_ticks(self.pid).value_or(0);
    return self;
}

std::optional<std::int64_t> process_start_ticks(std::int64_t pid) {
    const auto stat = read_proc_stat(pid);
    // A zombie has exited; only its parent has not collected it yet.
    if (!stat || stat->state == 'Z' || stat->state == 'X') {
        return std::nullopt;
    }
    return stat->start_ticks;
}

bool owner_is_gone(const ProcessOwner& owner, const ProcessOwner& self) {
    if (owner.host != self.host) {
        return false;
    }
    if (owner.pid == self.pid && owner.start_ticks == self.start_ticks) {
        return false;
    }
    if (owner.pid <= 0) {
        return true;  // never recorded: nobody can be writing it
    }
    if (!proc_available()) {
        // Without /proc only existence can be checked (EPERM: exists, owned by another user).
        return kill(static_cast<pid_t>(owner.pid), 0) != 0 && errno == ESRCH;
    }
    const auto start_ticks = process_start_ticks(owner.pid);
    if (!start_ticks) {
        return true;
    }
    return owner.start_ticks != 0 && *start_ticks != owner.start_ticks;
}

}  // namespace oomlab::store
