# Compilations go through ccache where it is installed (./oomlab.sh installs it), so a rebuild
# in the same clone (a build folder removed, a branch left and come back to) reuses every object
# compiled before. Paths under the source tree are hashed relative to it (base_dir), and the
# build folder is not part of the hash (hash_dir). GCC's precompiled headers differ byte for
# byte from one compilation to the next; ccache restores them from its cache too, so the objects
# that use them hit as well (the sloppiness ccache's manual asks for with precompiled headers).
# Depend mode reads a unit's includes from the compiler's -MD output where the default mode
# first preprocesses each unit it has not seen: a first build from nothing took 407.1 s of CPU
# so, 429.3 s in the default mode, 397.7 s without ccache. The price: a clone elsewhere misses,
# as CMake's unity files name their sources by absolute path (docs/building.md).
# OOMLAB_CCACHE=OFF compiles directly.
option(OOMLAB_CCACHE "Compile through ccache when it is installed" ON)
if(OOMLAB_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
    find_program(OOMLAB_CCACHE_PROGRAM ccache)
    if(OOMLAB_CCACHE_PROGRAM)
        set(CMAKE_CXX_COMPILER_LAUNCHER
            env "CCACHE_BASEDIR=${PROJECT_SOURCE_DIR}" CCACHE_NOHASHDIR=true CCACHE_DEPEND=true
            CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
            CCACHE_MAXSIZE=20G ${OOMLAB_CCACHE_PROGRAM})
        # GCC names the precompiled header it used in its preprocessed output only with this
        # (for a unit ccache preprocesses after all: one compiled without -MD).
        add_compile_options($<$<CXX_COMPILER_ID:GNU>:-fpch-preprocess>)
        message(STATUS "OOM Lab: compiling through ${OOMLAB_CCACHE_PROGRAM}")
    endif()
endif()
