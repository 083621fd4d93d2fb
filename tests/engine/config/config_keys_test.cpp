#include <gtest/gtest.h>

#include "bad_input.h"
#include "oomlab/common/errors.h"
#include "oomlab/config/config_keys.h"
#include "oomlab/config/key_relevance.h"

namespace oomlab {
namespace {

TEST(ConfigKeys, EveryMemorySettingOfTheSpecIsAKey) {
    for (const char* key : {"train.batch_size",
                            "train.accumulation",
                            "train.max_len",
                            "train.padding",
                            "train.optimizer",
                            "memory.precision",
                            "memory.checkpointing",
                            "embeddings.vocab",
                            "embeddings.trainable",
                            "embeddings.placement",
                            "embeddings.dtype",
                            "embeddings.sparse_grad",
                            "data.loading",
                            "data.pin_memory",
                            "eval.no_grad",
                            "memory.empty_cache",
                            "memory.cap_mb",
                            "memory.on_oom",
                            "debug.keep_loss_graph",
                            "dataset.path",
                            "dataset.valid_path",
                            "dataset.format",
                            "dataset.valid_ratio",
                            "embeddings.source",
                            "embeddings.path",
                            "embeddings.variant",
                            "model.kind",
                            "model.hidden",
                            "model.layers",
                            "model.heads",
                            "model.d_model",
                            "model.dropout",
                            "train.epochs",
                            "train.max_steps",
                            "train.lr",
                            "train.seed",
                            "eval.every",
                            "device"}) {
        const ConfigKeyInfo* info = find_config_key(key);
        ASSERT_NE(info, nullptr) << key;
        EXPECT_FALSE(info->help.empty()) << key;
    }
}

TEST(ConfigKeys, SetAndGetRoundTripEveryKind) {
    ExperimentConfig config;
    set_config_value(config, "train.batch_size", "64");
    set_config_value(config, "train.lr", "0.0005");
    set_config_value(config, "embeddings.trainable", "false");
    set_config_value(config, "train.optimizer", "adamw");
    set_config_value(config, "embeddings.vocab", "top:5000");
    set_config_value(config, "dataset.path", "data/train.tsv");
    EXPECT_EQ(config.train.batch_size, 64);
    EXPECT_DOUBLE_EQ(config.train.lr, 0.0005);
    EXPECT_FALSE(config.embeddings.trainable);
    EXPECT_EQ(config.train.optimizer, OptimizerKind::AdamW);
    EXPECT_EQ(config.embeddings.vocab, VocabMode::Top);
    EXPECT_EQ(config.embeddings.top_n, 5000);
    EXPECT_EQ(get_config_value(config, "embeddings.vocab"), "top:5000");
    EXPECT_EQ(get_config_value(config, "train.optimizer"), "adamw");
    EXPECT_EQ(get_config_value(config, "embeddings.trainable"), "false");
    EXPECT_EQ(get_config_value(config, "train.batch_size"), "64");
}

TEST(ConfigKeys, InvalidValuesNameTheKeyAndWhatIsAllowed) {
    ExperimentConfig config;
    const std::string zero =
        test::bad_input_message([&] { set_config_value(config, "train.batch_size", "0"); });
    EXPECT_NE(zero.find("train.batch_size"), std::string::npos) << zero;
    EXPECT_NE(zero.find("integer"), std::string::npos) << zero;
    const std::string word =
        test::bad_input_message([&] { set_config_value(config, "train.batch_size", "big"); });
    EXPECT_NE(word.find("\"big\""), std::string::npos) << word;
    const std::string choice =
        test::bad_input_message([&] { set_config_value(config, "train.optimizer", "lion"); });
    EXPECT_NE(choice.find("sgd, momentum, adam, adamw, adagrad"), std::string::npos) << choice;
    const std::string top =
        test::bad_input_message([&] { set_config_value(config, "embeddings.vocab", "top:0"); });
    EXPECT_NE(top.find("embeddings.vocab"), std::string::npos) << top;
    EXPECT_EQ(config.train.batch_size, ExperimentConfig{}.train.batch_size);
}

TEST(ConfigKeys, UnknownKeySuggestsTheClosest) {
    ExperimentConfig config;
    EXPECT_NE(test::bad_input_message([&] {
                  set_config_value(config, "train.batchsize", "8");
              }).find("did you mean \"train.batch_size\""),
              std::string::npos);
    EXPECT_EQ(closest_config_key("batch_size"), "train.batch_size");
    EXPECT_EQ(closest_config_key("memory.cap"), "memory.cap_mb");
    EXPECT_EQ(closest_config_key("optimiser"), "train.optimizer");
}

TEST(ConfigKeys, OverrideNeedsKeyEqualsValue) {
    ExperimentConfig config;
    apply_config_override(config, "memory.cap_mb=512");
    EXPECT_EQ(config.memory.cap_mb, 512);
    EXPECT_NE(test::bad_input_message([&] {
                  apply_config_override(config, "memory.cap_mb");
              }).find("KEY=VALUE"),
              std::string::npos);
}

// A run notes the settings changed from their defaults that it ignores: ZeRO sharding with
// one process shards nothing; heads mean nothing to a bag-of-words model.
TEST(KeyRelevance, UnusedSettingsAreTheChangedOnesThatDoNotApply) {
    ExperimentConfig config;
    EXPECT_TRUE(unused_settings(config, 1).empty()) << "defaults are never noted";
    set_config_value(config, "distributed.shard", "optimizer");
    set_config_value(config, "model.heads", "8");
    set_config_value(config, "train.batch_size", "8");
    const std::vector<std::string> alone = unused_settings(config, 1);
    ASSERT_EQ(alone.size(), 2u);
    EXPECT_EQ(alone[0].rfind("model.heads=8 has no effect here: used by model.kind=transformer", 0),
              0u)
        << alone[0];
    EXPECT_EQ(
        alone[1].rfind("distributed.shard=optimizer has no effect here: used when several", 0), 0u)
        << alone[1];
    EXPECT_EQ(unused_settings(config, 2).size(), 1u) << "two processes shard the state";
    EXPECT_FALSE(key_inactive_reason(config, "distributed.timeout_s", 1).empty());
    EXPECT_TRUE(key_inactive_reason(config, "distributed.timeout_s", 4).empty());
}

}  // namespace
}  // namespace oomlab
