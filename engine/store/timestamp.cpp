#include "oomlab/store/timestamp.h"

#include <cstdio>
#include <ctime>

namespace oomlab::store {

std::string iso8601_utc(std::chrono::system_clock::time_point time) {
    using namespace std::chrono;
    const auto since_epoch = duration_cast<milliseconds>(time.time_since_epoch());
    // Floor, so times before 1970 keep a non-negative millisecond part.
    auto whole_seconds = duration_cast<seconds>(since_epoch);
    if (whole_seconds > since_epoch) {
        whole_seconds -= seconds(1);
    }
    const auto millis = (since_epoch - whole_seconds).count();
    const std::time_t seconds_since_epoch = static_cast<std::time_t>(whole_seconds.count());
    std::tm utc{};
    gmtime_r(&seconds_since_epoch, &utc);
    char text[96];  // room for any int fields, so the compiler sees no truncation
    std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900,
                  utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                  static_cast<int>(millis));
    return text;
}

std::string utc_now() {
    return iso8601_utc(std::chrono::system_clock::now());
}

}  // namespace oomlab::store
