#!/usr/bin/env bash
# Checks that every #include "FOLDER/HEADER" in the library folders goes down the layer order
# (the same order CMakeLists.txt links and proves with its *_layer libraries), never up or
# sideways, and never into another folder's private header.
#
#   runtime < ir < ops, schedule < lower < targets (ir and runtime only) < compile < model
#   < frontend, tuner < tools < bench          (include/weft/*.h, the public API, is open to all)
#
# Private headers: *internal.h and *_private.h, readable only inside their folder, and
# schedule/state.h, readable by schedule/ and lower/ (others use schedule/query.h).
# Usage: scripts/check_layers.sh [ROOT]   (default: the repository). Exit 1 on a violation,
# after one line per violation: FILE:LINE: the include and why it is not allowed.
set -u
root=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}

declare -A below=(
    [runtime]=""
    [ir]="runtime"
    [ops]="ir runtime"
    [schedule]="ir runtime"
    [lower]="schedule ir runtime"
    [targets]="ir runtime"
    [compile]="targets lower schedule ir runtime"
    [model]="compile targets lower schedule ops ir runtime"
    [frontend]="model compile targets lower schedule ops ir runtime"
    [tuner]="model compile targets lower schedule ops ir runtime"
    [tools]="tuner frontend model compile targets lower schedule ops ir runtime"
    [bench]="tools tuner frontend model compile targets lower schedule ops ir runtime"
)
# header -> the other folders that may read it although it is private
declare -A friends=([schedule/state.h]="lower")

is_private() {
    case "$1" in
    schedule/state.h | */*internal.h | */*_private.h) return 0 ;;
    esac
    return 1
}

bad=0
for folder in "${!below[@]}"; do
    [[ -d "$root/$folder" ]] || continue
    while IFS= read -r hit; do
        file=${hit%%:*}
        rest=${hit#*:}
        line=${rest%%:*}
        [[ "${rest#*:}" =~ \"([^\"]+)\" ]] || continue
        inc=${BASH_REMATCH[1]}
        to=${inc%%/*}
        [[ "$inc" == */* && -n "${below[$to]+x}" ]] || continue # not a library folder (weft/..., system)
        [[ "$to" == "$folder" ]] && continue
        why=""
        if is_private "$inc" && [[ " ${friends[$inc]:-} " != *" $folder "* ]]; then
            why="private header of $to/"
        elif [[ " ${below[$folder]} " != *" $to "* ]]; then
            why="$to/ is not below $folder/ (allowed: ${below[$folder]:-none})"
        fi
        if [[ -n "$why" ]]; then
            echo "${file#"$root"/}:$line: #include \"$inc\": $why"
            bad=$((bad + 1))
        fi
    done < <(grep -rn --include='*.c' --include='*.h' -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$root/$folder")
done
if [[ $bad -ne 0 ]]; then
    echo "check_layers: $bad include(s) break the layer order"
    exit 1
fi
echo "check_layers: every include goes down the layer order"
