// A run's parameter counts come from the model's shapes, not from building it (a transformer far
// over its memory cap took 3.25 GB of host memory to be counted): for every kind of model, its
// sizes and its table frozen or trained, they are the built model's own.
#include <gtest/gtest.h>

#include "engine_support.h"
#include "oomlab/config/config_keys.h"
#include "oomlab/model/text_classifier.h"
#include "train/prepared_experiment.h"

namespace oomlab::train {
namespace {

TEST(ParameterCount, IsTheBuiltModelsForEveryKindOfModel) {
    const std::vector<std::vector<std::string>> cases = {
        {"model.kind=bag"},
        {"model.kind=bag", "model.hidden=7", "embeddings.trainable=false"},
        {"model.kind=bilstm", "model.layers=3", "model.hidden=9"},
        {"model.kind=bilstm", "embeddings.trainable=false", "embeddings.dtype=int8"},
        {"model.kind=transformer"},
        {"model.kind=transformer", "model.d_model=24", "model.heads=3", "model.ffn=40",
         "model.layers=3", "train.max_len=17", "embeddings.trainable=false"},
    };
    for (const std::vector<std::string>& settings : cases) {
        ExperimentConfig config = test::config_with({"device=cpu", "embeddings.source=synthetic"});
        std::string named;
        for (const std::string& setting : settings) {
            apply_config_override(config, setting);
            named += setting + " ";
        }
        const PreparedExperiment prepared = prepare_experiment(config, PrepareOptions{});
        const auto model = model::make_classifier(prepared.config, prepared.initial_embeddings,
                                                  prepared.num_classes);
        std::int64_t besides_table = 0;
        std::int64_t trainable_besides_table = 0;
        for (const torch::Tensor& parameter : model->parameters()) {
            if (!model->embeddings()->holds(parameter)) {
                besides_table += parameter.numel();
                trainable_besides_table += parameter.requires_grad() ? parameter.numel() : 0;
            }
        }
        const std::int64_t table = prepared.initial_embeddings.numel();
        EXPECT_EQ(prepared.info.parameters, besides_table + table) << named;
        EXPECT_EQ(prepared.info.trainable_parameters,
                  trainable_besides_table + (config.embeddings.trainable ? table : 0))
            << named;
    }
}

}  // namespace
}  // namespace oomlab::train
