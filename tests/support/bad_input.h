// The message of the BadInput an action throws, for tests of error messages.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "oomlab/common/errors.h"

namespace oomlab::test {

// A test failure when `action` throws nothing.
template <typename Action>
std::string bad_input_message(Action&& action) {
    try {
        action();
    } catch (const BadInput& error) {
        return error.what();
    }
    ADD_FAILURE() << "expected BadInput";
    return {};
}

}  // namespace oomlab::test
