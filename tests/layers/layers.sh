#!/usr/bin/env bash
# The include layering check: passes on this tree, and fails, naming the line, on a copy of the
# tree with one upward include, one sideways include of a private header, and one include of
# schedule/state.h from above schedule/ and lower/.
# Usage: layers.sh (from the repository root)
set -u
fails=0
check=scripts/check_layers.sh
out=$(bash $check 2>&1)
if [[ $? -ne 0 ]]; then
    echo "FAIL: the tree breaks the layer order:"
    echo "$out"
    fails=$((fails + 1))
else
    echo "ok: $out"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# expect_bad FILE INCLUDE REASON: a copy of the tree with INCLUDE added to FILE fails the check
# with a line naming FILE and REASON; the same copy without it passes.
expect_bad() {
    local file=$1 inc=$2 reason=$3
    rm -rf "$tmp/tree"
    mkdir -p "$tmp/tree"
    cp -r runtime ir ops schedule lower targets compile model frontend tuner tools bench "$tmp/tree/"
    bash $check "$tmp/tree" > /dev/null || { echo "FAIL: the unmodified copy does not pass"; fails=$((fails + 1)); }
    printf '#include "%s"\n' "$inc" >> "$tmp/tree/$file"
    local got rc
    got=$(bash $check "$tmp/tree" 2>&1)
    rc=$?
    if [[ $rc -ne 1 || "$got" != *"$file:"*"\"$inc\": $reason"* ]]; then
        echo "FAIL: #include \"$inc\" in $file: exit $rc, output:"
        echo "$got"
        echo "(wanted: $file:LINE: #include \"$inc\": $reason...)"
        fails=$((fails + 1))
    else
        echo "ok: #include \"$inc\" in $file is refused: $(grep -F "$file:" <<< "$got")"
    fi
}
expect_bad targets/registry.c lower/lower.h "lower/ is not below targets/"
expect_bad runtime/threadpool.c ir/error.h "ir/ is not below runtime/"
expect_bad ops/build.c schedule/schedule.h "schedule/ is not below ops/"
expect_bad tuner/task.c model/model_internal.h "private header of model/"
expect_bad tools/show.c lower/lower_internal.h "private header of lower/"
expect_bad tuner/sketch.c schedule/state.h "private header of schedule/"
[[ $fails -eq 0 ]]
