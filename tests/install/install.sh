#!/usr/bin/env bash
# Installs weft into a temporary prefix and uses it as a user would: checks what libweft.so
# exports (only weft_ functions, every WEFT_API function of the public headers, soname
# libweft.so.MAJOR), then builds examples/onnx_run.c and examples/mlp.c outside the tree once
# with pkg-config and once with CMake find_package(weft), and runs them on tests/data/models
# (each compares its outputs with PyTorch's).
# Usage: install.sh BUILD_DIR C_COMPILER [SANITIZERS]   (run from the source root)
set -u
build=$1 cc=$2 sanitize=${3:-}
src=$PWD
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
flags=""
[[ -n "$sanitize" ]] && flags="-fsanitize=$sanitize -fno-omit-frame-pointer"

cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; exit 1; }
lib=$(find "$tmp/prefix" -name 'libweft.so.*.*.*' | head -1)
pc=$(find "$tmp/prefix" -name weft.pc | head -1)
cfg=$(find "$tmp/prefix" -name weftConfig.cmake | head -1)
for f in "$lib" "$pc" "$cfg" "$tmp/prefix/include/weft/model.h" "$tmp/prefix/include/weft/weft.h"; do
    [[ -n "$f" && -f "$f" ]] || fail "installed file missing: ${f:-libweft.so/weft.pc/weftConfig.cmake}"
done
[[ $fails -eq 0 ]] || exit 1
[[ $(find "$tmp/prefix" -name 'libweft*.a' | wc -l) -eq 0 ]] && ok "no static libraries installed" || fail "static libraries installed"

# exports: weft_ functions only, and every WEFT_API function of the headers
nm -D --defined-only "$lib" | awk '$2 ~ /^[TtWwDdBbRrVvi]$/ {print $3}' | sort >"$tmp/exported"
grep -Ev '^(weft_|_init$|_fini$|__bss_start$|_edata$|_end$)' "$tmp/exported" >"$tmp/foreign"
if [[ -s "$tmp/foreign" ]]; then fail "libweft.so exports non-weft symbols: $(head -5 "$tmp/foreign" | tr '\n' ' ')"; else
    ok "libweft.so exports $(wc -l <"$tmp/exported") symbols, all weft_"; fi
grep -ciE 'onnx__|protobuf' "$tmp/exported" >/dev/null && fail "protobuf/onnx__ symbols exported"
wapi() { sed -n 's/^WEFT_API[^(]*[ *]\(weft_[a-z0-9_]*\)(.*/\1/p' "$@" | sort -u; }
wapi "$tmp"/prefix/include/weft/*.h >"$tmp/declared"
missing=$(comm -23 "$tmp/declared" "$tmp/exported")
[[ -z "$missing" ]] && ok "all $(wc -l <"$tmp/declared") WEFT_API functions of the public headers exported" ||
    fail "declared but not exported: $missing"
# the runtime entry points of JIT-compiled kernels (runtime/runtime.h) are WEFT_API too
wapi "$tmp"/prefix/include/weft/*.h $(grep -rl --include='*.h' '^WEFT_API' "$src" --exclude-dir=build --exclude-dir=.git) >"$tmp/marked"
extra=$(comm -13 "$tmp/marked" "$tmp/exported" | grep '^weft_')
[[ -z "$extra" ]] && ok "nothing exported beyond WEFT_API ($(comm -13 "$tmp/declared" "$tmp/exported" | grep -c '^weft_') runtime functions)" ||
    fail "exported but not marked WEFT_API: $extra"
soname=$(readelf -d "$lib" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[[ "$soname" =~ ^libweft\.so\.[0-9]+$ ]] && ok "soname $soname" || fail "soname '$soname'"

# pkg-config
export PKG_CONFIG_PATH=$(dirname "$pc")
for ex in onnx_run mlp; do
    if $cc -std=c11 -Wall -Wextra -Werror $flags "$src/examples/$ex.c" -o "$tmp/${ex}_pc" $(pkg-config --cflags --libs weft) -lm \
        -Wl,-rpath,"$(pkg-config --variable=libdir weft)" 2>"$tmp/pc.log" && "$tmp/${ex}_pc" "$src/tests/data/models" >"$tmp/run.log" 2>&1; then
        ok "pkg-config build of $ex runs: $(tail -1 "$tmp/run.log")"
    else
        fail "pkg-config build of $ex"; cat "$tmp/pc.log" "$tmp/run.log" 2>/dev/null | tail -20
    fi
done

# CMake find_package(weft)
mkdir -p "$tmp/user"
cp "$src/examples/onnx_run.c" "$src/examples/mlp.c" "$tmp/user/"
cat >"$tmp/user/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.20)
project(weft_user C)
find_package(weft 0.1 REQUIRED)
foreach(ex onnx_run mlp)
  add_executable(\${ex} \${ex}.c)
  target_compile_options(\${ex} PRIVATE -Wall -Wextra -Werror $flags)
  target_link_options(\${ex} PRIVATE $flags)
  target_link_libraries(\${ex} PRIVATE weft::weft m)
endforeach()
CMAKE
if cmake -S "$tmp/user" -B "$tmp/user/build" -DCMAKE_C_COMPILER="$cc" -DCMAKE_PREFIX_PATH="$tmp/prefix" >"$tmp/cm.log" 2>&1 &&
    cmake --build "$tmp/user/build" >>"$tmp/cm.log" 2>&1; then
    for ex in onnx_run mlp; do
        if "$tmp/user/build/$ex" "$src/tests/data/models" >"$tmp/run.log" 2>&1; then ok "find_package build of $ex runs: $(tail -1 "$tmp/run.log")"
        else fail "find_package build of $ex"; tail -20 "$tmp/run.log"; fi
    done
else
    fail "find_package(weft) build"; tail -30 "$tmp/cm.log"
fi
exit $((fails > 0))
