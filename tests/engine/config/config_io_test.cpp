#include <gtest/gtest.h>

#include "bad_input.h"
#include "oomlab/common/errors.h"
#include "oomlab/config/config_io.h"
#include "oomlab/config/config_keys.h"
#include "test_support.h"

namespace oomlab {
namespace {

TEST(ConfigIo, NestedAndFlatKeysAreEquivalent) {
    const ExperimentConfig nested = parse_config_json(
        R"({"train": {"batch_size": 16, "padding": "bucket"}, "memory": {"cap_mb": 256}})", "a");
    const ExperimentConfig flat = parse_config_json(
        R"({"train.batch_size": 16, "train.padding": "bucket", "memory.cap_mb": 256})", "b");
    EXPECT_EQ(config_to_json(nested), config_to_json(flat));
    EXPECT_EQ(nested.train.batch_size, 16);
    EXPECT_EQ(nested.train.padding, Padding::Bucket);
    EXPECT_EQ(nested.memory.cap_mb, 256);
}

TEST(ConfigIo, WrittenJsonReadsBackIdentically) {
    ExperimentConfig config;
    for (const char* assignment :
         {"model.kind=transformer", "embeddings.vocab=top:1000", "train.lr=0.01",
          "eval.no_grad=false", "dataset.valid_ratio=0.25", "device=cpu"}) {
        apply_config_override(config, assignment);
    }
    const std::string json = config_to_json(config);
    const ExperimentConfig again = parse_config_json(json, "again");
    EXPECT_EQ(config_to_json(again), json);
    for (const auto& key : config_keys()) {
        EXPECT_EQ(get_config_value(again, key.name), get_config_value(config, key.name))
            << key.name;
    }
}

TEST(ConfigIo, WrongTypeNamesFileAndKey) {
    const std::string message = test::bad_input_message(
        [] { parse_config_json(R"({"train": {"batch_size": "32"}})", "exp.json"); });
    EXPECT_NE(message.find("exp.json"), std::string::npos) << message;
    EXPECT_NE(message.find("train.batch_size"), std::string::npos) << message;
    EXPECT_NE(message.find("integer"), std::string::npos) << message;
}

TEST(ConfigIo, UnknownKeyInFileSuggestsTheClosest) {
    const std::string message = test::bad_input_message(
        [] { parse_config_json(R"({"memory": {"precison": "bf16"}})", "exp.json"); });
    EXPECT_NE(message.find("exp.json"), std::string::npos) << message;
    EXPECT_NE(message.find("memory.precision"), std::string::npos) << message;
}

TEST(ConfigIo, SyntaxErrorNamesTheLine) {
    const std::string message = test::bad_input_message(
        [] { parse_config_json("{\n  \"train\": {\n    \"epochs\": 3,\n  }\n}", "x.json"); });
    EXPECT_EQ(message.rfind("x.json:4:", 0), 0u) << message;
}

TEST(ConfigIo, NumberOutOfRangeIsBadInput) {
    // Regression: found by fuzz_config; nlohmann throws out_of_range, not parse_error.
    const std::string message =
        test::bad_input_message([] { parse_config_json("1E11111", "big.json"); });
    EXPECT_EQ(message.rfind("big.json: invalid JSON", 0), 0u) << message;
    EXPECT_NE(test::bad_input_message(
                  [] { parse_config_json(R"({"train": {"lr": 1e999}})", "lr.json"); }),
              "");
}

// A key given twice is refused naming it, not resolved silently to one of them (parsers
// disagree on which).
// A refusal names the line of the key, nested or dotted, as well as the key.
TEST(ConfigIo, ARefusalNamesTheLineOfTheKey) {
    const std::string nested = test::bad_input_message([] {
        parse_config_json("{\n  \"train\": {\n    \"batch_size\": \"eight\"\n  }\n}", "c.json");
    });
    EXPECT_EQ(nested.rfind("c.json:3: train.batch_size: expected an integer, got \"eight\"", 0), 0u)
        << nested;
    const std::string dotted = test::bad_input_message([] {
        parse_config_json("{\n  \"train.batch_size\": 8,\n  \"model.kindd\": \"bag\"\n}", "d.json");
    });
    EXPECT_EQ(dotted.rfind("d.json:3: unknown config key \"model.kindd\"", 0), 0u) << dotted;
}

TEST(ConfigIo, AKeyGivenTwiceIsRefusedNamingIt) {
    const std::string message = test::bad_input_message([] {
        parse_config_json(R"({"train": {"batch_size": 4, "batch_size": 8}})", "twice.json");
    });
    EXPECT_EQ(message.rfind("twice.json: the key \"batch_size\" appears twice", 0), 0u) << message;
    // Nested and as a dotted name, in either order, is the same key twice.
    for (const char* both : {R"({"train": {"max_steps": 3}, "train.max_steps": 4})",
                             R"({"train.max_steps": 4, "train": {"max_steps": 3}})"}) {
        const std::string nested_and_flat =
            test::bad_input_message([&] { parse_config_json(both, "both.json"); });
        EXPECT_EQ(
            nested_and_flat.rfind("both.json:1: the key \"train.max_steps\" is given twice", 0), 0u)
            << nested_and_flat;
    }
    // The same key in two objects is two keys.
    EXPECT_NO_THROW(
        parse_config_json(R"({"dataset": {"path": ""}, "embeddings": {"path": ""}})", "ok.json"));
}

// What a refused value echoes: the whole range of an int64 key; a control character as '?'
// (a NUL cut the message before); a value of megabytes cut, with its length.
TEST(ConfigIo, ARefusedValueIsEchoedReadably) {
    ExperimentConfig config;
    const std::string seed =
        test::bad_input_message([&] { set_config_value(config, "train.seed", "-1"); });
    EXPECT_NE(seed.find("an integer from 0 to 9223372036854775807"), std::string::npos) << seed;
    const std::string nul = test::bad_input_message(
        [] { parse_config_json("{\"train.optimizer\": \"ad\\u0000am\"}", "nul.json"); });
    EXPECT_NE(nul.find("\"ad?am\" is not valid; expected one of: sgd"), std::string::npos) << nul;
    const std::string huge = test::bad_input_message(
        [&] { set_config_value(config, "train.optimizer", std::string(10 << 20, 'x')); });
    EXPECT_LT(huge.size(), 300u);
    EXPECT_NE(huge.find("(10485760 bytes) is not valid"), std::string::npos) << huge;
}

TEST(ConfigIo, MissingFileIsBadInputNamingIt) {
    const std::string message =
        test::bad_input_message([] { load_config_file("/nonexistent/exp.json"); });
    EXPECT_NE(message.find("/nonexistent/exp.json"), std::string::npos) << message;
}

TEST(ConfigIo, ImpossibleCombinationsAreRejected) {
    ExperimentConfig heads;
    apply_config_override(heads, "model.kind=transformer");
    apply_config_override(heads, "model.d_model=100");
    apply_config_override(heads, "model.heads=3");
    EXPECT_NE(test::bad_input_message([&] { validate_config(heads); }).find("model.heads"),
              std::string::npos);

    ExperimentConfig sparse;
    apply_config_override(sparse, "embeddings.sparse_grad=true");
    apply_config_override(sparse, "train.optimizer=adam");
    EXPECT_NE(test::bad_input_message([&] { validate_config(sparse); }).find("train.optimizer"),
              std::string::npos);

    ExperimentConfig file;
    apply_config_override(file, "embeddings.source=file");
    EXPECT_NE(test::bad_input_message([&] { validate_config(file); }).find("embeddings.path"),
              std::string::npos);

    ExperimentConfig int8;
    apply_config_override(int8, "embeddings.dtype=int8");
    apply_config_override(int8, "embeddings.trainable=true");
    EXPECT_NE(test::bad_input_message([&] {
                  validate_config(int8);
              }).find("embeddings.dtype=int8 stores a frozen table"),
              std::string::npos);
    apply_config_override(int8, "embeddings.trainable=false");
    EXPECT_NO_THROW(validate_config(int8));

    EXPECT_NO_THROW(validate_config(ExperimentConfig{}));
}

TEST(ConfigIo, Int8IsATableTypeNotAPrecision) {
    ExperimentConfig config;
    EXPECT_NE(test::bad_input_message([&] {
                  apply_config_override(config, "memory.precision=int8");
              }).find("memory.precision"),
              std::string::npos);
}

}  // namespace
}  // namespace oomlab
