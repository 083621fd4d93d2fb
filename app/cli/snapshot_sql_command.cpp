// oomlab-cli snapshot sql: a snapshot as SQLite tables (snapshot_sql.h), a query's answer
// printed as a table or CSV, or the database kept for sqlite3 and any SQLite tool.
#include <stdlib.h>

#include <filesystem>
#include <functional>
#include <iostream>
#include <optional>

#include "cli_context.h"
#include "oomlab/common/errors.h"
#include "oomlab/common/files.h"
#include "oomlab/common/text_table.h"
#include "oomlab/common/utf8.h"
#include "oomlab/snapshot_reader/snapshot_report.h"
#include "oomlab/snapshot_reader/snapshot_sql.h"

namespace oomlab::cli {
namespace {

namespace fs = std::filesystem;

// What the tables hold, when no query is given: each table and view with its columns.
constexpr const char* kSchemaQuery =
    "SELECT m.type, m.name, group_concat(p.name, ', ') FROM sqlite_schema m, "
    "pragma_table_info(m.name) p WHERE m.type IN ('table', 'view') GROUP BY m.name "
    "ORDER BY m.type, m.rowid";

// A folder of its own for a database kept only while the command runs.
class TemporaryFolder {
public:
    TemporaryFolder() {
        std::string pattern = (fs::temp_directory_path() / "oomlab-sql-XXXXXX").string();
        if (!mkdtemp(pattern.data())) {
            throw Error("cannot make a temporary folder in " + fs::temp_directory_path().string());
        }
        m_path = pattern;
    }
    ~TemporaryFolder() {
        std::error_code ignored;
        fs::remove_all(m_path, ignored);
    }
    TemporaryFolder(const TemporaryFolder&) = delete;
    TemporaryFolder& operator=(const TemporaryFolder&) = delete;
    const fs::path& path() const { return m_path; }

private:
    fs::path m_path;
};

// A CSV field: quoted where it holds a comma, a quote or a line break (RFC 4180).
std::string csv_field(const std::string& value) {
    if (value.find_first_of(",\"\r\n") == std::string::npos) {
        return value;
    }
    std::string quoted = "\"";
    for (const char c : value) {
        quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    }
    return quoted + "\"";
}

void print_answer(const std::string& database, const std::string& query, bool csv) {
    if (csv) {
        query_snapshot_or_database(database, query, [](const std::vector<std::string>& row) {
            for (std::size_t i = 0; i < row.size(); ++i) {
                std::cout << (i ? "," : "") << csv_field(row[i]);
            }
            std::cout << '\n';
        });
        return;
    }
    std::optional<TextTable> table;
    std::size_t rows = 0;
    query_snapshot_or_database(database, query, [&](const std::vector<std::string>& row) {
        if (!table) {
            table.emplace(row);
            return;
        }
        ++rows;
        std::vector<std::string> cells;
        for (const std::string& cell : row) {
            cells.push_back(printable_line(cell));  // a frame's name is the program's text
        }
        table->add_row(std::move(cells));
    });
    table->print(std::cout);
    std::cout << "(" << rows << (rows == 1 ? " row" : " rows") << ")\n";
}

}  // namespace

void query_snapshot_or_database(const std::string& file, const std::string& query,
                                const std::function<void(const std::vector<std::string>&)>& row) {
    if (is_snapshot_database(file)) {
        query_snapshot_database(file, query, row);
        return;
    }
    const TemporaryFolder temporary;
    const std::string database = (temporary.path() / "snapshot.db").string();
    write_snapshot_database(read_snapshot_report(file), database);
    query_snapshot_database(database, query, row);
}

void add_snapshot_sql_command(CLI::App& snapshot, int& exit_code) {
    auto* sql = snapshot.add_subcommand(
        "sql",
        "The snapshot as SQLite tables (devices, events, stacks, segments, blocks, ooms, stages; "
        "views allocations and at_peak): a query's answer, or the database kept with --out");
    auto file = std::make_shared<std::string>();
    sql->add_option("FILE", *file, "The snapshot (or trace), or a database an earlier --out wrote")
        ->required();
    auto query = std::make_shared<std::string>();
    sql->add_option("QUERY", *query,
                    "One SELECT, e.g. \"SELECT line, sum(size) FROM at_peak GROUP BY line "
                    "ORDER BY 2 DESC\" (default: the tables and their columns)");
    auto out = std::make_shared<std::string>();
    sql->add_option("--out", *out, "Keep the database in this file (FILE.db)");
    auto csv = std::make_shared<bool>(false);
    sql->add_flag("--csv", *csv, "The answer as CSV, its header first");
    auto force = std::make_shared<bool>(false);
    sql->add_flag("--force", *force, "Replace an --out file that is no snapshot database");
    sql->callback([=, &exit_code] {
        check_input_path(*file, "FILE");
        std::string source = *file;  // what the query reads: the snapshot, or its database kept
        if (!out->empty()) {
            if (is_snapshot_database(*file)) {
                throw BadInput("--out " + *out + ": " + *file +
                               " is a snapshot database already; query it as it is");
            }
            check_output_path(*out, {"--out", {*file}, *force, is_snapshot_database});
            write_snapshot_database(read_snapshot_report(*file), *out);
            std::cerr << "wrote " << *out << " (sqlite3 " << *out
                      << " opens it; its tables: oomlab-cli snapshot sql " << *out << ")\n";
            source = *out;
        }
        print_answer(source, query->empty() ? kSchemaQuery : *query, *csv);
        exit_code = kExitOk;
    });
}

}  // namespace oomlab::cli
