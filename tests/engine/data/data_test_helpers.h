// Helpers for the dataset tests.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "bad_input.h"
#include "oomlab/common/errors.h"
#include "oomlab/data/dataset.h"
#include "test_support.h"

namespace oomlab::test {

inline std::string dataset_fixture(const std::string& name) {
    return fixture("datasets/" + name);
}

inline std::vector<std::string> texts_of(const std::vector<RawExample>& examples) {
    std::vector<std::string> texts;
    for (const RawExample& example : examples) {
        texts.push_back(example.text);
    }
    return texts;
}

inline std::vector<std::string> labels_of(const std::vector<RawExample>& examples) {
    std::vector<std::string> labels;
    for (const RawExample& example : examples) {
        labels.push_back(example.label);
    }
    return labels;
}

}  // namespace oomlab::test
