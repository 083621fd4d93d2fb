// The out-of-memory messages that other people's programs printed, as they were posted
// (tests/data/wild/messages, one a file; PROVENANCE.tsv says where each came from): every one is
// read, each figure equals what a person reads in it (EXPECTED.tsv, the figures as printed,
// converted here on their own), and the verdict never contradicts them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "oomlab/advice/oom_message.h"
#include "oomlab/common/errors.h"
#include "test_support.h"

namespace oomlab {
namespace {

using Row = std::map<std::string, std::string>;

std::vector<Row> expected_rows() {
    std::ifstream file(test::fixture("wild/messages/EXPECTED.tsv"));
    std::vector<std::string> columns;
    std::vector<Row> rows;
    for (std::string line; std::getline(file, line);) {
        std::vector<std::string> cells;
        std::stringstream split(line);
        for (std::string cell; std::getline(split, cell, '\t');) {
            cells.push_back(cell);
        }
        if (columns.empty()) {
            columns = cells;
            continue;
        }
        Row row;
        for (std::size_t i = 0; i < columns.size(); ++i) {
            row[columns[i]] = i < cells.size() ? cells[i] : "-";
        }
        rows.push_back(row);
    }
    return rows;
}

// "12.50 MiB", "256 bytes", "1024.00 MB" (MPS counts a GB as 1024 MB) as bytes.
std::optional<double> printed_bytes(const std::string& figure) {
    static const std::map<std::string, double> kUnits = {
        {"bytes", 1},       {"B", 1},          {"KiB", 1024.0},       {"KB", 1024.0},
        {"MiB", 1048576.0}, {"MB", 1048576.0}, {"GiB", 1073741824.0}, {"GB", 1073741824.0}};
    std::stringstream in(figure);
    double number = 0;
    std::string unit;
    if (!(in >> number >> unit) || !kUnits.count(unit)) {
        return std::nullopt;
    }
    return number * kUnits.at(unit);
}

constexpr double kOneEiB = 1152921504606846976.0;

// The figure the row gives in `column`, as the reader must hold it: nothing for "-", nothing
// (and set aside) past 1 EiB.
void expect_figure(const Row& row, const std::string& column,
                   const std::optional<std::int64_t>& read, const OomMessage& message) {
    const std::string& printed = row.at(column);
    const std::string where = row.at("file") + " " + column + " \"" + printed + "\"";
    const std::optional<double> bytes = printed_bytes(printed);
    if (printed == "-" || !bytes) {
        EXPECT_FALSE(read) << where << ": read " << *read;
        return;
    }
    if (*bytes > kOneEiB) {
        EXPECT_FALSE(read) << where;
        EXPECT_FALSE(message.set_aside.empty()) << where << ": an impossible figure is said so";
        return;
    }
    ASSERT_TRUE(read) << where;
    EXPECT_EQ(*read, std::llround(*bytes)) << where;
}

std::optional<std::int64_t> sum(const std::optional<std::int64_t>& a, const std::string& b) {
    const std::optional<double> more = printed_bytes(b);
    return a && more ? std::optional<std::int64_t>(*a + std::llround(*more)) : std::nullopt;
}

std::string read_message(const std::string& file) {
    return test::read_text(test::fixture("wild/messages/" + file));
}

TEST(WildMessages, EveryMessageIsReadFigureByFigure) {
    const std::vector<Row> rows = expected_rows();
    ASSERT_GE(rows.size(), 40u);
    for (const Row& row : rows) {
        const std::string text = read_message(row.at("file"));
        ASSERT_FALSE(text.empty()) << row.at("file");
        OomExplanation e;
        try {
            e = explain_oom_message(text);
        } catch (const BadInput& refusal) {
            ADD_FAILURE() << row.at("file") << " refused: " << refusal.what();
            continue;
        }
        const OomMessage& m = e.message;
        const std::string& device = row.at("device");
        const std::string where = row.at("file");
        if (device == "mps" || device == "cpu") {
            EXPECT_EQ(m.device, device == "mps" ? OomMessage::Device::Mps : OomMessage::Device::Cpu)
                << where;
        } else {
            EXPECT_EQ(m.device, OomMessage::Device::Cuda) << where;
            std::string backend = m.backend;  // "CUDA", "HIP", ... "DirectML"
            std::transform(backend.begin(), backend.end(), backend.begin(), ::tolower);
            EXPECT_EQ(backend, device) << where;
        }
        EXPECT_EQ(m.device_index, row.at("gpu_index") == "-" ? -1 : std::stoi(row.at("gpu_index")))
            << where;
        expect_figure(row, "requested", m.requested, m);
        expect_figure(row, "total", m.total, m);
        expect_figure(row, "free", m.free, m);
        expect_figure(row, "allocated", m.allocated, m);
        expect_figure(row, "allowed", m.allowed, m);
        if (device == "mps" && row.at("this_process") != "-") {  // "other allocations", beside
            const std::string other = row.at("this_process").substr(6);  // what MPS allocated
            EXPECT_EQ(m.this_process, sum(m.allocated, other)) << where;
        } else {
            expect_figure(row, "this_process", m.this_process, m);
        }
        if (row.at("reserved_total") != "-") {
            expect_figure(row, "reserved_total", m.reserved, m);
        } else if (row.at("reserved_unallocated") != "-") {
            EXPECT_EQ(m.reserved, sum(m.allocated, row.at("reserved_unallocated"))) << where;
        }
        std::string processes;
        for (const auto& [pid, held] : m.processes) {
            processes += (processes.empty() ? "" : ",") + std::to_string(pid);
        }
        std::string expected_processes;
        std::stringstream listed(row.at("processes") == "-" ? "" : row.at("processes"));
        for (std::string item; std::getline(listed, item, ',');) {
            const std::optional<double> held = printed_bytes(item.substr(item.find(':') + 1));
            if (held && *held > kOneEiB) {
                continue;  // set aside, as any impossible figure
            }
            expected_processes +=
                (expected_processes.empty() ? "" : ",") + item.substr(0, item.find(':'));
        }
        EXPECT_EQ(processes, expected_processes) << where;
    }
}

// The errors kept beside them that are no out-of-memory (PROVENANCE.tsv lists them, EXPECTED.tsv
// does not): a failure in the DataLoader's pin-memory thread that was an invalid argument, an
// internal assert of the cudaMallocAsync backend. Each is refused, not explained as memory.
TEST(WildMessages, AnErrorThatIsNoOutOfMemoryIsRefused) {
    std::set<std::string> read;
    for (const Row& row : expected_rows()) {
        read.insert(row.at("file"));
    }
    std::ifstream provenance(test::fixture("wild/messages/PROVENANCE.tsv"));
    int refused = 0;
    for (std::string line; std::getline(provenance, line);) {
        const std::string file = line.substr(0, line.find('\t'));
        if (file == "file" || read.count(file)) {
            continue;
        }
        EXPECT_THROW(explain_oom_message(read_message(file)), BadInput) << file;
        ++refused;
    }
    EXPECT_GE(refused, 3);
}

// A person checks the explanation against the message: each figure the message printed is
// quoted as printed ("1.12 MiB", not "1.1 MiB"; MPS's "GB" as MPS prints it; the CPU's bytes),
// this process's own figure and MPS's other allocations included.
TEST(WildMessages, TheFactsQuoteTheMessagesFiguresAsPrinted) {
    int quoted = 0;
    for (const Row& row : expected_rows()) {
        const OomExplanation e = explain_oom_message(read_message(row.at("file")));
        std::string facts;
        for (const std::string& fact : e.facts) {
            facts += fact + "\n";
        }
        for (const char* column :
             {"requested", "total", "free", "allocated", "allowed", "this_process"}) {
            std::string printed = row.at(column);
            if (row.at("device") == "mps" && printed.rfind("other:", 0) == 0) {
                printed = printed.substr(6);  // MPS's "other allocations"
            }
            const std::optional<double> bytes = printed_bytes(printed);
            if (printed == "-" || !bytes || *bytes > kOneEiB) {
                continue;
            }
            EXPECT_NE(facts.find(printed), std::string::npos)
                << row.at("file") << " " << column << " \"" << printed << "\" not in:\n"
                << facts;
            ++quoted;
        }
    }
    EXPECT_GT(quoted, 500);
}

// The segment PyTorch's caching allocator opens for a request (2 MiB up to 1 MiB, 20 MiB below
// 10 MiB, else the request rounded up to 2 MiB): what "free" must hold for it to fit.
std::int64_t segment_for(std::int64_t requested) {
    using test::kMiB;
    return requested <= kMiB       ? 2 * kMiB
           : requested < 10 * kMiB ? 20 * kMiB
                                   : (requested + 2 * kMiB - 1) / (2 * kMiB) * (2 * kMiB);
}

TEST(WildMessages, NoVerdictContradictsTheMessagesOwnFigures) {
    std::map<OomVerdict, int> verdicts;
    for (const Row& row : expected_rows()) {
        const OomExplanation e = explain_oom_message(read_message(row.at("file")));
        const OomMessage& m = e.message;
        const std::string why = row.at("file") + ": " + e.summary;
        ++verdicts[e.verdict];
        EXPECT_FALSE(e.summary.empty()) << row.at("file");
        EXPECT_FALSE(e.tries.empty()) << why;
        const bool too_large = m.requested && (m.total ? *m.requested > *m.total : false);
        if (too_large) {
            EXPECT_EQ(e.verdict, OomVerdict::TooLarge) << why;
            continue;
        }
        // The device had the request's segment free, and a driver's 2 MiB page more: neither
        // fragmentation nor others' memory nor plain lack of memory explains the failure.
        if (m.requested && m.free && *m.free >= segment_for(*m.requested) + 2 * kMiB) {
            EXPECT_TRUE(e.verdict == OomVerdict::DeviceNotFull ||
                        e.verdict == OomVerdict::LimitReached)
                << why;
        }
        // A limit the process reached leads as the limit, where it is less than the device
        // (a memory fraction of 1.0 allows all of it: the device is the limit).
        if (m.allowed && m.requested && m.reserved && (!m.total || *m.allowed < *m.total) &&
            *m.reserved + segment_for(*m.requested) > *m.allowed) {
            EXPECT_EQ(e.verdict, OomVerdict::LimitReached) << why;
        }
        if (m.driver_level) {
            EXPECT_EQ(e.verdict, OomVerdict::OutsideAllocator) << why;
        }
        // Fragmentation: the cache alone would have held the request, or the cache and the
        // free memory together its segment (the allocator gives back only whole segments).
        // Memory in use: they would not have, within the printed figures' rounding.
        const std::optional<std::int64_t> cache =
            m.reserved && m.allocated ? std::optional(*m.reserved - *m.allocated) : std::nullopt;
        if (e.verdict == OomVerdict::Fragmentation) {
            EXPECT_TRUE(m.requested && cache &&
                        (*cache >= *m.requested ||
                         (m.free && *cache + *m.free >= segment_for(*m.requested) + 2 * kMiB)))
                << why << ": the cached memory would not have held the request";
        }
        constexpr std::int64_t kRounding = 16 * kMiB;  // two figures printed to 0.01 GiB, and more
        if (e.verdict == OomVerdict::OutOfMemory && m.requested && cache && m.free && m.total &&
            *m.allocated <= *m.total && m.set_aside.empty()) {
            EXPECT_LT(*cache + *m.free, segment_for(*m.requested) + 2 * kMiB + kRounding)
                << why << ": the cache and the free memory would have held it";
        }
    }
    // The corpus holds every kind of failure.
    for (const OomVerdict verdict :
         {OomVerdict::Fragmentation, OomVerdict::TooLarge, OomVerdict::OutOfMemory,
          OomVerdict::LimitReached, OomVerdict::DeviceNotFull, OomVerdict::OutsideAllocator}) {
        EXPECT_GT(verdicts[verdict], 0) << oom_verdict_name(verdict);
    }
}

}  // namespace
}  // namespace oomlab
