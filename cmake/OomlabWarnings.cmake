# Warnings for the project's own targets only (torch, Qt and QCustomPlot headers are system
# includes). CI builds with OOMLAB_WERROR=ON; developers may turn it off while working.
option(OOMLAB_WERROR "Treat the project's warnings as errors" OFF)
add_library(oomlab_warnings INTERFACE)
target_compile_options(oomlab_warnings INTERFACE
    $<$<CXX_COMPILER_ID:GNU,Clang>:-Wall -Wextra -Wpedantic -Wshadow -Wundef -Wnon-virtual-dtor>
    $<$<AND:$<CXX_COMPILER_ID:GNU,Clang>,$<BOOL:${OOMLAB_WERROR}>>:-Werror>)
add_library(oomlab::warnings ALIAS oomlab_warnings)

# The hardening Debian builds with (dpkg-buildflags): stack protector, fortified libc calls in
# optimised builds, read-only relocations bound at load time. Off under the sanitizers, which
# replace the same checks.
option(OOMLAB_HARDENING "Build with Debian's hardening flags" ON)
if(OOMLAB_HARDENING AND NOT CMAKE_CXX_FLAGS MATCHES "-fsanitize"
   AND CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    add_compile_options(-fstack-protector-strong
                        $<$<NOT:$<CONFIG:Debug>>:-D_FORTIFY_SOURCE=2>)
    add_link_options(-Wl,-z,relro -Wl,-z,now)
endif()
