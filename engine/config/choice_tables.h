// The names of every enum-valued setting, shared by the key registry and summaries.
#pragma once

#include "oomlab/config/experiment_config.h"
#include "oomlab/config/value_parsing.h"

namespace oomlab::config_detail {

inline const ChoiceTable<EmbeddingSource> kEmbeddingSources = {
    {EmbeddingSource::Default, "default"},
    {EmbeddingSource::File, "file"},
    {EmbeddingSource::Synthetic, "synthetic"}};
inline const ChoiceTable<EmbeddingPlacement> kPlacements = {{EmbeddingPlacement::Device, "device"},
                                                            {EmbeddingPlacement::Cpu, "cpu"}};
inline const ChoiceTable<DType> kPrecisions = {
    {DType::Fp32, "fp32"}, {DType::Fp16, "fp16"}, {DType::Bf16, "bf16"}};
inline const ChoiceTable<DType> kTableDTypes = {
    {DType::Fp32, "fp32"}, {DType::Fp16, "fp16"}, {DType::Bf16, "bf16"}, {DType::Int8, "int8"}};
inline const ChoiceTable<ModelKind> kModelKinds = {{ModelKind::Bag, "bag"},
                                                   {ModelKind::BiLstm, "bilstm"},
                                                   {ModelKind::Transformer, "transformer"}};
inline const ChoiceTable<Padding> kPaddings = {
    {Padding::Fixed, "fixed"}, {Padding::Dynamic, "dynamic"}, {Padding::Bucket, "bucket"}};
inline const ChoiceTable<OptimizerKind> kOptimizers = {{OptimizerKind::Sgd, "sgd"},
                                                       {OptimizerKind::Momentum, "momentum"},
                                                       {OptimizerKind::Adam, "adam"},
                                                       {OptimizerKind::AdamW, "adamw"},
                                                       {OptimizerKind::Adagrad, "adagrad"}};
inline const ChoiceTable<Checkpointing> kCheckpointing = {{Checkpointing::None, "none"},
                                                          {Checkpointing::Layers, "layers"}};
inline const ChoiceTable<DataLoading> kLoadings = {{DataLoading::Eager, "eager"},
                                                   {DataLoading::Streaming, "streaming"}};
inline const ChoiceTable<EmptyCache> kEmptyCache = {
    {EmptyCache::Never, "never"}, {EmptyCache::Step, "step"}, {EmptyCache::Eval, "eval"}};
inline const ChoiceTable<OnOom> kOnOom = {
    {OnOom::Stop, "stop"}, {OnOom::Halve, "halve"}, {OnOom::Adapt, "adapt"}};
inline const ChoiceTable<DistributedBackend> kDistributedBackends = {
    {DistributedBackend::Auto, "auto"},
    {DistributedBackend::Gloo, "gloo"},
    {DistributedBackend::Nccl, "nccl"}};
inline const ChoiceTable<ShardMode> kShardModes = {{ShardMode::None, "none"},
                                                   {ShardMode::Optimizer, "optimizer"},
                                                   {ShardMode::Gradients, "gradients"},
                                                   {ShardMode::Parameters, "parameters"}};

}  // namespace oomlab::config_detail
