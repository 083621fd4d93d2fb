#include "batching.h"

#include <algorithm>
#include <numeric>
#include <random>

namespace oomlab::train {

Batch make_host_batch(const EncodedExamples& examples, const std::vector<std::int64_t>& batch,
                      Padding padding, int max_len, bool pinned, bool with_mask) {
    const auto rows = static_cast<std::int64_t>(batch.size());
    const std::int64_t length =
        prepare::padded_length(lengths_of(examples), batch, padding, max_len);
    auto options = torch::TensorOptions().dtype(torch::kLong).pinned_memory(pinned);
    Batch result;
    result.ids = torch::zeros({rows, length}, options);
    if (with_mask) {
        result.mask = torch::zeros({rows, length}, options.dtype(torch::kBool));
    }
    result.labels = torch::empty({rows}, options);
    auto* ids = result.ids.data_ptr<std::int64_t>();
    bool* mask = with_mask ? result.mask.data_ptr<bool>() : nullptr;
    auto* labels = result.labels.data_ptr<std::int64_t>();
    for (std::int64_t r = 0; r < rows; ++r) {
        const std::int64_t example = batch[r];
        const std::int64_t count = examples.length(example);
        std::copy_n(examples.ids.begin() + examples.offsets[example], count, ids + r * length);
        if (mask != nullptr) {
            std::fill_n(mask + r * length, count, true);
        }
        labels[r] = examples.labels[example];
    }
    return result;
}

std::int64_t ResidentDataset::bytes() const {
    return ids.nbytes() + lengths.nbytes() + labels.nbytes();
}

ResidentDataset make_resident_dataset(const EncodedExamples& examples, int max_len,
                                      const torch::Device& device) {
    std::vector<std::int64_t> everyone(examples.size());
    std::iota(everyone.begin(), everyone.end(), 0);
    std::vector<std::int64_t> lengths(examples.size());
    for (std::size_t i = 0; i < lengths.size(); ++i) {
        lengths[i] = examples.length(std::int64_t(i));
    }
    // Without a mask: summing one made an int64 copy of every id on the way, beside the ids
    // (on the CPU, the device), twice the dataset at the run's start.
    const Batch all = make_host_batch(examples, everyone, Padding::Fixed, max_len, false,
                                      /*with_mask=*/false);
    ResidentDataset dataset;
    dataset.ids = all.ids.to(device);
    dataset.lengths = torch::tensor(lengths, torch::kLong).to(device);
    dataset.labels = all.labels.to(device);
    return dataset;
}

namespace {

class ResidentBatchSource final : public BatchSource {
public:
    ResidentBatchSource(std::shared_ptr<const ResidentDataset> dataset,
                        const EncodedExamples& examples,
                        std::vector<std::vector<std::int64_t>> plan, Padding padding, int max_len)
        : m_dataset(std::move(dataset)),
          m_examples(examples),
          m_plan(std::move(plan)),
          m_padding(padding),
          m_max_len(max_len) {}

    std::optional<Batch> next() override {
        if (m_next == m_plan.size()) {
            return std::nullopt;
        }
        const auto& members = m_plan[m_next++];
        const std::int64_t length =
            prepare::padded_length(lengths_of(m_examples), members, m_padding, m_max_len);
        const torch::Tensor index =
            torch::tensor(members, torch::kLong).to(m_dataset->ids.device());
        Batch batch;
        batch.ids = m_dataset->ids.index_select(0, index).narrow(1, 0, length);
        batch.mask = batch.ids.ne(0);
        batch.labels = m_dataset->labels.index_select(0, index);
        return batch;
    }

    std::int64_t resident_bytes() const override { return m_dataset->bytes(); }

private:
    std::shared_ptr<const ResidentDataset> m_dataset;
    const EncodedExamples& m_examples;
    std::vector<std::vector<std::int64_t>> m_plan;
    std::size_t m_next = 0;
    Padding m_padding;
    int m_max_len;
};

}  // namespace

std::unique_ptr<BatchSource> make_resident_batch_source(
    std::shared_ptr<const ResidentDataset> dataset, const EncodedExamples& examples,
    std::vector<std::vector<std::int64_t>> plan, Padding padding, int max_len) {
    return std::make_unique<ResidentBatchSource>(std::move(dataset), examples, std::move(plan),
                                                 padding, max_len);
}

}  // namespace oomlab::train
