// The embedded default: Debian fortune files, one topic per class.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>

#include "data_test_helpers.h"

namespace oomlab {
namespace {

using Strings = std::vector<std::string>;

// Sets OOMLAB_FORTUNES_DIR for one test and restores it afterwards.
class FortunesDirOverride {
public:
    explicit FortunesDirOverride(const std::string& dir) {
        if (const char* old = std::getenv(kVariable)) {
            m_old = old;
        }
        setenv(kVariable, dir.c_str(), 1);
    }
    ~FortunesDirOverride() {
        if (m_old) {
            setenv(kVariable, m_old->c_str(), 1);
        } else {
            unsetenv(kVariable);
        }
    }

private:
    static constexpr const char* kVariable = "OOMLAB_FORTUNES_DIR";
    std::optional<std::string> m_old;
};

TEST(Fortunes, ReadsTopicFilesWithNormalizedText) {
    FortunesDirOverride dir(test::dataset_fixture("fortunes"));
    EXPECT_EQ(default_fortunes_dir(), test::dataset_fixture("fortunes"));
    const auto examples = read_default_examples();
    EXPECT_EQ(
        test::texts_of(examples),
        (Strings{"Real programmers don't comment their code.",
                 "The computer is down. -- a sysadmin", "Politicians are the same all over.",
                 "Bold science is new science.", "Work expands so as to fill the time available.",
                 "I like work; it fascinates me."}));
    EXPECT_EQ(test::labels_of(examples),
              (Strings{"computers", "computers", "politics", "science", "work", "work"}));
    EXPECT_EQ(default_dataset_description(),
              "Debian fortunes: 4 topics (computers, politics, science, work), 6 quotations");
}

TEST(Fortunes, EmptyPathLoadsTheDefault) {
    FortunesDirOverride dir(test::dataset_fixture("fortunes"));
    DatasetSpec spec;
    spec.valid_ratio = 0.0;
    const DatasetSplit split = load_dataset(spec);
    EXPECT_EQ(split.train.format, DatasetFormat::Fortunes);
    EXPECT_EQ(split.train.label_names, (Strings{"computers", "politics", "science", "work"}));
    EXPECT_EQ(split.train.examples.size(), 6u);
    EXPECT_EQ(split.train.source,
              "Debian fortunes: 4 topics (computers, politics, science, work), 6 quotations");
}

TEST(Fortunes, ExplicitFormatReadsAFortunesFolder) {
    const auto examples =
        read_raw_examples(test::dataset_fixture("fortunes"), DatasetFormat::Fortunes);
    EXPECT_EQ(examples.size(), 6u);
}

TEST(Fortunes, MissingPackageSaysWhatToInstall) {
    FortunesDirOverride dir("/nonexistent/oomlab-fortunes");
    const std::string message = test::bad_input_message([] { read_default_examples(); });
    EXPECT_NE(message.find("apt-get install fortunes"), std::string::npos) << message;
    EXPECT_NE(message.find("dataset.path"), std::string::npos) << message;
    EXPECT_NE(message.find("/nonexistent/oomlab-fortunes/computers"), std::string::npos) << message;
    EXPECT_NE(default_dataset_description().find("not installed"), std::string::npos);
}

TEST(Fortunes, InstalledPackage) {
    const std::string installed = "/usr/share/games/fortunes";
    if (!std::filesystem::exists(installed + "/computers")) {
        GTEST_SKIP() << "the Debian fortunes package is not installed (apt-get install fortunes)";
    }
    FortunesDirOverride dir(installed);
    const auto examples = read_default_examples();
    std::map<std::string, std::size_t> per_topic;
    for (const RawExample& example : examples) {
        ++per_topic[example.label];
        EXPECT_FALSE(example.text.empty());
        EXPECT_EQ(example.text.find_first_of("\t\n\b"), std::string::npos) << example.text;
        EXPECT_EQ(example.text.find("  "), std::string::npos) << example.text;
    }
    ASSERT_EQ(per_topic.size(), 4u);
    for (const auto& [topic, count] : per_topic) {
        EXPECT_GT(count, 500u) << topic;
    }
    const std::string description = default_dataset_description();
    EXPECT_NE(description.find(std::to_string(examples.size()) + " quotations"), std::string::npos)
        << description;
}

}  // namespace
}  // namespace oomlab
