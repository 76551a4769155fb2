# WEFT_FUZZ: instruments every library for libFuzzer (-fsanitize=fuzzer-no-link). Needs clang
# with libFuzzer (Debian: clang-14 libclang-rt-14-dev); configure a build folder of its own:
#   CC=clang-14 CXX=clang++-14 cmake -S . -B build/fuzz -DWEFT_FUZZ=ON -DWEFT_SANITIZE=address,undefined
# Without them WEFT_FUZZ is turned off with a warning (the replay tests of tests/fuzz still run).
include(CheckCSourceCompiles)
set(CMAKE_REQUIRED_FLAGS -fsanitize=fuzzer)
set(CMAKE_REQUIRED_LINK_OPTIONS -fsanitize=fuzzer)
check_c_source_compiles("
#include <stddef.h>
#include <stdint.h>
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { return (int)(n && d[0]); }" WEFT_HAVE_LIBFUZZER)
unset(CMAKE_REQUIRED_FLAGS)
unset(CMAKE_REQUIRED_LINK_OPTIONS)
if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang" OR NOT WEFT_HAVE_LIBFUZZER)
  message(WARNING "weft: WEFT_FUZZ needs clang with libFuzzer (apt-get install clang-14 libclang-rt-14-dev; "
                  "CC=clang-14); the libFuzzer targets are left out")
  set(WEFT_FUZZ OFF)
else()
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
