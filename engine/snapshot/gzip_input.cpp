#include "snapshot/gzip_input.h"

#include <zlib.h>

#include <limits>

#include "oomlab/common/errors.h"
#include "oomlab/common/format.h"

namespace oomlab::snapshot {

bool is_gzip(const std::string& bytes) {
    return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
           static_cast<unsigned char>(bytes[1]) == 0x8b;
}

std::string gunzip(const std::string& bytes, std::size_t most, const std::string& source) {
    if (bytes.size() > std::numeric_limits<uInt>::max()) {
        throw BadInput(source + ": a gzip file over 4 GiB; gunzip it first");
    }
    z_stream stream{};
    if (inflateInit2(&stream, 16 + MAX_WBITS) != Z_OK) {  // 16: a gzip header, not zlib's
        throw BadInput(source + ": cannot start reading gzip");
    }
    stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
    stream.avail_in = static_cast<uInt>(bytes.size());
    std::string out;
    int status = Z_OK;
    char chunk[1 << 16];
    while (status != Z_STREAM_END) {
        stream.next_out = reinterpret_cast<Bytef*>(chunk);
        stream.avail_out = sizeof chunk;
        status = inflate(&stream, Z_NO_FLUSH);
        if (status != Z_OK && status != Z_STREAM_END) {
            inflateEnd(&stream);
            throw BadInput(source + ": gzip, but corrupt or cut short at byte " +
                           std::to_string(stream.total_in) +
                           " of its compressed data; gunzip it or record it again");
        }
        out.append(chunk, sizeof chunk - stream.avail_out);
        if (out.size() > most) {
            inflateEnd(&stream);
            throw BadInput(source + ": unpacks to more than " + format_bytes(std::int64_t(most)) +
                           ", the most a snapshot may hold here");
        }
    }
    inflateEnd(&stream);
    return out;
}

}  // namespace oomlab::snapshot
