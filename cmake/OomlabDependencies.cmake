# Third-party packages. Torch is only ever linked PRIVATE into the engine.
find_package(Threads REQUIRED)
find_package(SQLite3 REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(Torch REQUIRED)

# TorchConfig exports compile flags (e.g. the C++ ABI define) only as a string.
separate_arguments(OOMLAB_TORCH_CXX_FLAGS UNIX_COMMAND "${TORCH_CXX_FLAGS}")
add_library(oomlab_torch INTERFACE)
# PyTorch 2.x wheels' libtorch.so and libtorch_cpu.so also export std::filesystem functions of
# the newer libstdc++ they were built with; called with this compiler's objects they crash
# (remove_all jumped to address 0). Naming libstdc++ first puts it ahead of them in the
# program's symbol lookup, so every binary here binds to the system's own.
target_link_libraries(oomlab_torch INTERFACE stdc++ ${TORCH_LIBRARIES})
target_include_directories(oomlab_torch SYSTEM INTERFACE ${TORCH_INCLUDE_DIRS})
# The flags carry the C++ string ABI LibTorch was built with; every target must use the same
# one or std::string cannot cross between the engine's libraries (pip wheels before PyTorch
# 2.7 use the old ABI).
add_compile_options(${OOMLAB_TORCH_CXX_FLAGS})
option(OOMLAB_REQUIRE_CUDA "Fail unless the LibTorch found has CUDA (the cuda preset)" OFF)
if(TARGET torch_cuda OR TARGET c10_cuda)
    set(OOMLAB_WITH_CUDA ON)
    # The toolkit LibTorch's CMake files found (major.minor), named by --version.
    string(REGEX MATCH "^[0-9]+\\.[0-9]+" OOMLAB_CUDA_VERSION "${CUDAToolkit_VERSION}")
else()
    set(OOMLAB_WITH_CUDA OFF)
    set(OOMLAB_CUDA_VERSION "")
    if(OOMLAB_REQUIRE_CUDA)
        message(FATAL_ERROR "OOMLAB_REQUIRE_CUDA: the LibTorch found (${TORCH_INSTALL_PREFIX}, "
                            "${Torch_VERSION}) has no CUDA; point CMAKE_PREFIX_PATH at a CUDA "
                            "LibTorch (scripts/torch_env.sh --prefix)")
    endif()
endif()
# Code that uses torch tests OOMLAB_WITH_CUDA (0 or 1) for the parts that need CUDA.
target_compile_definitions(oomlab_torch INTERFACE OOMLAB_WITH_CUDA=$<BOOL:${OOMLAB_WITH_CUDA}>)
message(STATUS "OOM Lab: LibTorch ${Torch_VERSION}, CUDA support: ${OOMLAB_WITH_CUDA} ${OOMLAB_CUDA_VERSION}")
add_library(oomlab::torch ALIAS oomlab_torch)

# A target's files compile twenty to a unit: each unit parses its headers and, at its end,
# instantiates the templates they use (a torch unit about 3.5 s whatever its own code), so
# fewer units is less work (the training engine's 19 files: 36.1 s of compiling in four units,
# 14.6 s in one). Names in two files' anonymous namespaces must differ. With so few torch units
# a precompiled torch header no longer pays: making it took 25.6 s, and it brought torch/nn.h's
# and torch/optim.h's instantiations to every unit (the six torch units with it 88.9 s of CPU,
# without it 72.4 s, one job at a time).
# OOMLAB_UNITY_BUILD=OFF compiles file by file, which recompiles less after a one-file edit.
function(oomlab_unity_build target)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ${OOMLAB_UNITY_BUILD}
                                               UNITY_BUILD_BATCH_SIZE 20)
endfunction()

# GCC collects its own garbage whenever its heap has doubled since the last collection, from
# 128 MiB (its defaults on a machine of 1 GiB or more): about 6% of a large unit's compile time
# here (the snapshot reader's first unit 25.9 s -> 24.2, the CLI tests' first 15.5 -> 14.5).
# From 1 GiB, and at five times the size, it seldom collects: a compiler takes up to 300 MB
# more (1.6 GB for the largest unit measured), and the code it writes is the same.
add_compile_options(
    "$<$<CXX_COMPILER_ID:GNU>:--param=ggc-min-expand=400;--param=ggc-min-heapsize=1048576>")

# Code that parses arguments or does little work a user waits for (`target`) compiles at -Og in
# the optimised builds: most of its time at -O2 went to optimising CLI11's, nlohmann/json's and
# the standard library's templates, while what it runs (training, reading a snapshot) is in the
# engine's libraries still at -O2. -Og inlines the small functions -O1 does and leaves out the
# passes that cost most (the CLI's units one after another: 41.6 s of CPU at -O1, 29.8 s at
# -Og). LEVEL -O1 keeps a target there: the components that compile torch, where -Og saved
# nothing (24.8 s of CPU at -O1, 23.6 s at -Og) and the training loop runs each step; the
# workbench, whose own plotting slowed at -Og (bench/plot_replot_bench.cpp: a replot 2.7-3.2 ms
# at -O1, 3.3 ms at -Og; a batch appended 4.1-4.5 us, 6.8 us). The tests:
# oomlab_compile_tests_unoptimised.
function(oomlab_compile_lightly target)
    cmake_parse_arguments(ARG "" "LEVEL" "" ${ARGN})
    if(NOT ARG_LEVEL)
        set(ARG_LEVEL -Og)
    endif()
    target_compile_options(${target} PRIVATE $<$<CONFIG:RelWithDebInfo,Release>:${ARG_LEVEL}>)
endfunction()

# The test programs compile unoptimised in the optimised builds: -O0 takes about 30% less time
# than -O1 on their largest units (tests/cli's: 9.3 s -> 6.3 s), and what they run and time is
# in the engine's libraries, at -O2, or in the programs they start. A program stays at -O1 where
# its target has OOMLAB_OPTIMISED_TEST set: one whose own code does much work (oomlab_add_gtest's
# OPTIMISED). Unoptimised, fortified libc calls are off, which glibc warns of unless told. For
# every target of the calling folder.
function(oomlab_compile_tests_unoptimised)
    set(optimised $<CONFIG:RelWithDebInfo,Release>)
    set(o1 $<BOOL:$<TARGET_PROPERTY:OOMLAB_OPTIMISED_TEST>>)
    add_compile_options($<${optimised}:$<IF:${o1},-O1,-O0>>
                        $<$<AND:${optimised},$<NOT:${o1}>>:-U_FORTIFY_SOURCE>)
endfunction()

