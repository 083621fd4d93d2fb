// The embedding table's storage types: an int8 table keeps a quarter of the bytes and gives
// back each row within half a quantization step of the vectors it was made from.
#include <gtest/gtest.h>

#include "oomlab/model/text_classifier.h"

namespace oomlab::model {
namespace {

EmbeddingsConfig frozen_table(DType dtype) {
    EmbeddingsConfig config;
    config.dtype = dtype;
    config.trainable = false;
    return config;
}

TEST(EmbeddingTable, AnInt8TableLooksUpEachRowWithinHalfAStepOfItsVectors) {
    torch::manual_seed(7);
    torch::Tensor vectors = torch::randn({40, 16});
    vectors[0].zero_();       // the padding row
    vectors[3].mul_(1000);    // rows of very different magnitudes keep their own scale
    vectors[5].fill_(-0.25);  // a row of one magnitude is exact
    EmbeddingTable table(vectors, frozen_table(DType::Int8));

    EXPECT_EQ(table->weight().scalar_type(), torch::kInt8);
    EXPECT_EQ(table->weight().sizes(), vectors.sizes());
    ASSERT_EQ(table->parameters().size(), 2u) << "the rows and their scales";
    for (const torch::Tensor& part : table->parameters()) {
        EXPECT_TRUE(table->holds(part));
        EXPECT_FALSE(part.requires_grad());
    }
    EXPECT_EQ(table->dim(), 16);

    const torch::Tensor ids = torch::tensor({0, 3, 5, 7, 39, 3}, torch::kLong).view({2, 3});
    const torch::Tensor rows = table(ids);
    ASSERT_EQ(rows.sizes(), (std::vector<std::int64_t>{2, 3, 16}));
    EXPECT_EQ(rows.scalar_type(), torch::kFloat32);
    const torch::Tensor expected = vectors.index_select(0, ids.flatten()).view({2, 3, 16});
    const torch::Tensor half_step = expected.abs().amax(-1, /*keepdim=*/true) / 127.0 / 2.0 + 1e-6;
    EXPECT_TRUE((rows - expected).abs().le(half_step).all().item<bool>())
        << (rows - expected).abs().max().item<float>();
    EXPECT_TRUE(rows[0][0].eq(0).all().item<bool>()) << "the padding row stays zero";
    EXPECT_TRUE(torch::equal(rows[0][2], vectors[5]));
}

TEST(EmbeddingTable, AnInt8TableTakesAQuarterOfTheBytesAndAScaleARow) {
    const torch::Tensor vectors = torch::randn({100, 50});
    EmbeddingTable fp32(vectors, frozen_table(DType::Fp32));
    EmbeddingTable int8(vectors, frozen_table(DType::Int8));
    std::int64_t bytes = 0;
    for (const torch::Tensor& part : int8->parameters()) {
        bytes += std::int64_t(part.nbytes());
    }
    EXPECT_EQ(bytes, 100 * 50 + 100 * 4);
    EXPECT_EQ(std::int64_t(fp32->weight().nbytes()), 100 * 50 * 4);
}

}  // namespace
}  // namespace oomlab::model
