# Warnings for the project's own targets only (not for torch or Qt headers).
add_library(oomlab_warnings INTERFACE)
target_compile_options(oomlab_warnings INTERFACE
    $<$<CXX_COMPILER_ID:GNU,Clang>:-Wall -Wextra -Wpedantic -Wno-unused-parameter>)
add_library(oomlab::warnings ALIAS oomlab_warnings)
