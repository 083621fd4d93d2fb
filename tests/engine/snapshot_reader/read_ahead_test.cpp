// A snapshot file read ahead on a thread of its own: the reader gets every byte in order, an
// error met reading the file reaches it where the file went wrong, and the thread stops when
// the reader is done early.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "oomlab/common/errors.h"
#include "oomlab/snapshot_reader/snapshot_report.h"
#include "pickle_bytes.h"
#include "snapshot_reader/read_ahead.h"
#include "test_support.h"

namespace oomlab::snapshot {
namespace {

// Every byte of `input`, read `most` at a time.
std::string read_all(PickleInput& input, std::size_t most) {
    std::string all;
    std::string chunk(most, '\0');
    while (const std::size_t got = input.read(chunk.data(), most)) {
        all.append(chunk, 0, got);
    }
    return all;
}

std::string gzipped(const test::TempDir& dir, const std::string& name, const std::string& bytes) {
    const std::string path = dir.file(name);
    test::write_file(path, bytes);
    EXPECT_EQ(std::system(("gzip " + path).c_str()), 0);
    return path + ".gz";
}

// More than the chunks read ahead (4 of 1 MiB), so the thread waits for the reader.
TEST(ReadAhead, HandsEveryByteInOrderAndSaysHowFarTheFileWasRead) {
    const test::TempDir dir;
    const std::string bytes = many_allocations(60000);  // about 7 MB
    test::write_file(dir.file("plain.pickle"), bytes);
    for (const std::string& file :
         {dir.file("plain.pickle"), gzipped(dir, "packed.pickle", bytes)}) {
        SnapshotFileInput input(file, bytes.size() + 1);
        EXPECT_EQ(input.peek(4), bytes.substr(0, 4)) << "what was peeked is read again";
        ReadAhead ahead(input);
        EXPECT_EQ(ahead.size_bound(), input.size_bound());
        EXPECT_EQ(read_all(ahead, 100000), bytes) << file;
        EXPECT_EQ(ahead.file_position(), std::filesystem::file_size(file)) << file;
    }
}

// A gzip cut short fails in the thread reading it: the reader is told, naming the file, once
// it has read what came before.
TEST(ReadAhead, AGzipCutShortIsRefusedNamingTheFile) {
    const test::TempDir dir;
    const std::string path = gzipped(dir, "cut.pickle", many_allocations(60000));
    std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
    try {
        read_snapshot_report(path);
        ADD_FAILURE() << "half a gzip was read";
    } catch (const BadInput& error) {
        EXPECT_NE(std::string(error.what()).find("cut.pickle.gz: gzip, but corrupt or cut short"),
                  std::string::npos)
            << error.what();
    }
}

// A reader that stops early (a pickle ends before its file, a cancel) leaves no thread behind.
TEST(ReadAhead, GoneBeforeTheFileEndsItStopsReading) {
    const test::TempDir dir;
    const std::string path = dir.file("long.pickle");
    test::write_file(path, std::string(std::size_t(32) << 20, 'x'));
    SnapshotFileInput input(path, std::uint64_t(64) << 20);
    {
        ReadAhead ahead(input);
        char byte = 0;
        ASSERT_EQ(ahead.read(&byte, 1), 1u);
    }  // joins: a thread still reading would hang here or crash after
    EXPECT_LT(input.file_position(), std::uint64_t(32) << 20) << "it read on to the end";
}

}  // namespace
}  // namespace oomlab::snapshot
