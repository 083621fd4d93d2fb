// A tracking URI's password is never repeated: refused before anything is sent, and shown as
// "***" in the refusal.
#include <gtest/gtest.h>

#include "oomlab/common/errors.h"
#include "oomlab/trackers/mlflow_export.h"

namespace oomlab::trackers {
namespace {

TEST(TrackingUri, APasswordIsShownAsStars) {
    EXPECT_EQ(uri_without_password("http://alice:s3cret@host:5000/path"),
              "http://alice:***@host:5000/path");
    EXPECT_EQ(uri_without_password("https://a:b:c@host"), "https://a:***@host");
    EXPECT_EQ(uri_without_password("http://alice@host:5000"), "http://alice@host:5000");
    EXPECT_EQ(uri_without_password("http://host:5000/a@b"), "http://host:5000/a@b");
    EXPECT_EQ(uri_without_password("http://127.0.0.1:5000"), "http://127.0.0.1:5000");
    EXPECT_EQ(uri_without_password("ftp://u:p@h"), "ftp://u:***@h");
}

TEST(TrackingUri, APasswordInTheAddressIsRefusedWithoutRepeatingIt) {
    for (const char* uri : {"http://alice:s3cret@host:5000", "ftp://alice:s3cret@host"}) {
        try {
            check_tracking_uri(uri, "--tracking-uri");
            FAIL() << uri << " was accepted";
        } catch (const BadInput& error) {
            const std::string message = error.what();
            EXPECT_EQ(message.find("s3cret"), std::string::npos) << message;
            EXPECT_NE(message.find("--tracking-uri"), std::string::npos) << message;
            EXPECT_NE(message.find("MLFLOW_TRACKING_PASSWORD"), std::string::npos) << message;
        }
    }
    EXPECT_NO_THROW(check_tracking_uri("http://alice@host:5000", "--tracking-uri"));
}

}  // namespace
}  // namespace oomlab::trackers
