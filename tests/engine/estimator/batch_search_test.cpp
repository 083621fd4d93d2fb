// The batch-size search's steps, over a test of fitting whose answer is known: it finds the
// largest batch to within 1/32 in a few trials, however far the estimator's start was.
#include <gtest/gtest.h>

#include <algorithm>

#include "oomlab/session/batch_size_search.h"

namespace oomlab {
namespace {

struct Searched {
    int batch = 0;
    int trials = 0;
};

// Batches up to `largest` fit.
Searched search(int predicted, int largest, int most) {
    Searched result;
    result.batch = search_largest_batch(predicted, most, [&](int batch) {
        ++result.trials;
        EXPECT_GE(batch, 1);
        EXPECT_LE(batch, most);
        return batch <= largest;
    });
    return result;
}

TEST(BatchSearch, FindsTheLargestFittingBatchToWithinAThirtySecond) {
    for (const int largest : {1, 7, 64, 300, 1000, 2999}) {
        for (const int predicted : {0, 1, largest / 2, largest, largest * 2}) {
            const Searched found = search(predicted, largest, 3000);
            EXPECT_LE(found.batch, largest) << "predicted " << predicted;
            EXPECT_LE(largest - found.batch, std::max(1, found.batch / 32))
                << "largest " << largest << ", predicted " << predicted;
        }
    }
}

TEST(BatchSearch, AGoodPredictionTakesAFewTrials) {
    EXPECT_LE(search(300, 300, 3000).trials, 5);
    EXPECT_LE(search(330, 300, 3000).trials, 8);
    EXPECT_LE(search(270, 300, 3000).trials, 8);
}

// The estimator can be far off (a device it does not model, a setting it over-counts): the
// search then doubles past twice the prediction instead of creeping up by a tenth.
TEST(BatchSearch, APredictionFarTooLowStillTakesFewTrials) {
    const Searched found = search(0, 1000, 5000);
    EXPECT_GE(found.batch, 1000 - 1000 / 32);
    EXPECT_LE(found.trials, 24);
    EXPECT_LE(search(10, 2000, 5000).trials, 24);
}

TEST(BatchSearch, NothingOrEverythingFits) {
    const Searched none = search(50, 0, 3000);
    EXPECT_EQ(none.batch, 0);
    EXPECT_LE(none.trials, 12);
    const Searched all = search(2900, 5000, 3000);
    EXPECT_EQ(all.batch, 3000);
    EXPECT_LE(all.trials, 3);
}

}  // namespace
}  // namespace oomlab
