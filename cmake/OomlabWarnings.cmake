# Warnings for the project's own targets only (torch, Qt and QCustomPlot headers are system
# includes). CI builds with OOMLAB_WERROR=ON; developers may turn it off while working.
option(OOMLAB_WERROR "Treat the project's warnings as errors" OFF)
add_library(oomlab_warnings INTERFACE)
target_compile_options(oomlab_warnings INTERFACE
    $<$<CXX_COMPILER_ID:GNU,Clang>:-Wall -Wextra -Wpedantic -Wshadow -Wundef -Wnon-virtual-dtor>
    $<$<AND:$<CXX_COMPILER_ID:GNU,Clang>,$<BOOL:${OOMLAB_WERROR}>>:-Werror>)
add_library(oomlab::warnings ALIAS oomlab_warnings)
