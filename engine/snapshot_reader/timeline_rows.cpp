#include "timeline_rows.h"

#include <rapidjson/error/en.h>
#include <rapidjson/reader.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "json_snapshot.h"
#include "oomlab/common/errors.h"

namespace oomlab::snapshot {
namespace {

// torch.profiler._memory_profiler's indices: its actions from 1, its categories from 0 as
// _CATEGORY_TO_COLORS lists them, 7 (None) where it could not tell.
enum Action : std::int64_t { kPreexisting = 1, kCreate = 2, kIncrementVersion = 3, kDestroy = 4 };
constexpr const char* kCategories[] = {"parameter",      "optimizer_state", "input",
                                       "temporary",      "activation",      "gradient",
                                       "autograd_detail"};
constexpr std::int64_t kUnknownCategory = 7;
constexpr std::int64_t kFirstAddress = std::int64_t(1) << 40;

struct Row {
    std::int64_t time = 0;
    std::int64_t action = 0;
    std::int64_t bytes = 0;
    std::int64_t category = 0;
};

// Writes each row as the snapshot trace's events, as rapidjson's reader reads the rows.
class RowsToTrace {
public:
    explicit RowsToTrace(const std::string& source) : m_source(source), m_out(m_buffer) {
        m_out.StartObject();
        m_out.Key("device_traces");
        m_out.StartArray();
        m_out.StartArray();
    }

    std::string finish() {
        flush_pending();
        m_out.EndArray();
        // An empty trace after it: a profile's last trace is the CPU's, and the rows do not
        // say which device theirs is.
        m_out.StartArray();
        m_out.EndArray();
        m_out.EndArray();
        m_out.EndObject();
        return m_buffer.GetString();
    }

    bool StartArray() {
        ++m_depth;
        if (m_depth > 2) {
            refuse("a list inside a row");
        }
        m_fields.clear();
        return true;
    }
    bool EndArray(rapidjson::SizeType) {
        if (m_depth-- == 2) {
            row_read();
        }
        return true;
    }
    bool Int(int value) { return number(value); }
    bool Uint(unsigned value) { return number(value); }
    bool Int64(std::int64_t value) { return number(value); }
    bool Uint64(std::uint64_t value) {
        return value > std::uint64_t(INT64_MAX) ? refuse("a number past 2**63")
                                                : number(std::int64_t(value));
    }
    bool Double(double) { return refuse("a number with a fraction"); }
    bool Null() { return refuse("null"); }
    bool Bool(bool) { return refuse("true or false"); }
    bool String(const char*, rapidjson::SizeType, bool) { return refuse("a string"); }
    bool RawNumber(const char*, rapidjson::SizeType, bool) { return true; }
    bool StartObject() { return refuse("an object"); }
    bool Key(const char*, rapidjson::SizeType, bool) { return true; }
    bool EndObject(rapidjson::SizeType) { return true; }

private:
    bool number(std::int64_t value) {
        if (m_depth != 2) {
            return refuse("a number outside a row");
        }
        m_fields.push_back(value);
        return true;
    }

    [[noreturn]] bool refuse(const std::string& what) const {
        throw BadInput(m_source + ": row " + std::to_string(m_rows + 1) +
                       " of what export_memory_timeline writes holds " + what +
                       ", not [time, action, bytes, category] (four whole numbers)");
    }

    void row_read() {
        if (m_fields.size() != 4) {
            refuse(std::to_string(m_fields.size()) + " numbers");
        }
        const Row row{m_fields[0], m_fields[1], m_fields[2], m_fields[3]};
        if (row.action < kPreexisting || row.action > kDestroy) {
            refuse("the action " + std::to_string(row.action) + " (1 to 4 are PyTorch's)");
        }
        if (row.category < 0 || row.category > kUnknownCategory) {
            refuse("the category " + std::to_string(row.category) + " (0 to 7 are PyTorch's)");
        }
        ++m_rows;
        m_first_time = row.time > 0 && !m_first_time ? row.time : m_first_time;
        if (row.action == kIncrementVersion && row.bytes < 0) {  // its version's category ends
            flush_pending();
            m_pending = row;
            return;
        }
        if (row.action == kIncrementVersion && m_pending && m_pending->bytes == -row.bytes &&
            m_pending->category == row.category) {
            m_pending.reset();  // the same category before and after: nothing moves
            return;
        }
        flush_pending();
        if (row.bytes > 0) {
            allocate(row);
        } else if (row.bytes < 0) {
            free(row);
        }
    }

    void flush_pending() {
        if (m_pending) {
            free(*m_pending);
            m_pending.reset();
        }
    }

    void allocate(const Row& row) {
        const std::int64_t address = next_address(row.bytes);
        m_live[{row.category, row.bytes}].push_back(address);
        event("alloc", address, row);
    }

    void free(const Row& row) {
        std::vector<std::int64_t>& live = m_live[{row.category, -row.bytes}];
        std::int64_t address = 0;
        if (live.empty()) {  // made before the rows began: a free the trace shows alone
            address = next_address(-row.bytes);
        } else {
            address = live.back();
            live.pop_back();
        }
        event("free_requested", address, row);
        event("free_completed", address, row);
    }

    std::int64_t next_address(std::int64_t bytes) {
        const std::int64_t address = m_next;
        m_next += (bytes + 511) / 512 * 512;
        return address;
    }

    void event(const char* action, std::int64_t address, const Row& row) {
        const std::int64_t time = row.time < 0 ? m_first_time.value_or(0) : row.time;
        m_out.StartObject();
        m_out.Key("action");
        m_out.String(action);
        m_out.Key("addr");
        m_out.Int64(address);
        m_out.Key("size");
        m_out.Int64(row.bytes < 0 ? -row.bytes : row.bytes);
        m_out.Key("stream");
        m_out.Int64(0);
        m_out.Key("time_us");
        m_out.Int64(time / 1000);  // the rows' times are nanoseconds
        m_out.Key("frames");
        m_out.StartArray();
        m_out.EndArray();
        m_out.Key("category");
        if (row.category == kUnknownCategory) {
            m_out.Null();
        } else {
            m_out.String(kCategories[row.category]);
        }
        m_out.EndObject();
    }

    const std::string& m_source;
    rapidjson::StringBuffer m_buffer;
    rapidjson::Writer<rapidjson::StringBuffer> m_out;
    int m_depth = 0;
    std::vector<std::int64_t> m_fields;
    std::size_t m_rows = 0;
    std::optional<std::int64_t> m_first_time;
    std::optional<Row> m_pending;
    std::map<std::pair<std::int64_t, std::int64_t>, std::vector<std::int64_t>> m_live;
    std::int64_t m_next = kFirstAddress;
};

}  // namespace

bool looks_like_timeline_rows(const std::string& head) {
    const std::size_t at = after_openings(head, "[[");
    return at != std::string::npos && (head[at] == '-' || (head[at] >= '0' && head[at] <= '9'));
}

std::string snapshot_json_of_timeline_rows(const std::string& text, const std::string& source) {
    RowsToTrace rows(source);
    rapidjson::Reader reader;
    rapidjson::StringStream stream(text.c_str());
    const rapidjson::ParseResult result =
        reader.Parse<rapidjson::kParseIterativeFlag>(stream, rows);
    if (result.IsError()) {
        throw BadInput(source + ": the rows export_memory_timeline writes, but not JSON at byte " +
                       std::to_string(result.Offset()) + " (" +
                       rapidjson::GetParseError_En(result.Code()) + "); export them again");
    }
    return rows.finish();
}

}  // namespace oomlab::snapshot
