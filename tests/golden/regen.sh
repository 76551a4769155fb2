#!/usr/bin/env bash
# Regenerates tests/golden/lower/*.expected from the *.steps cases with `weft show` and prints
# the diff for review. The first line of a case is "# OP SHAPE"; the rest is step text, or one
# line "default"/"manual" for a built-in schedule. NAME.expected is the final loop IR;
# NAME.after-PASS.expected is what WEFT_DUMP=PASS prints after that lowering pass (to add one,
# create the empty file and run this script). Usage: tests/golden/regen.sh [build dir]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
weft=${1:-$here/../../build/debug}/weft
update() { # FILE TEXT
    if [[ -s "$1" ]] && ! diff -u "$1" <(printf '%s\n' "$2"); then echo "^^ $1 changed"; fi
    printf '%s\n' "$2" > "$1"
}
for steps in "$here"/lower/*.steps; do
    read -r _ op shape kind < "$steps"
    target=interp
    [[ "${kind:-}" == gpu ]] && target=cuda:sm_90 # lowered with GPU caps (needs the CUDA target)
    body=$(tail -n +2 "$steps")
    case "$body" in
    default|manual) args=(--schedule "$body") ;;
    *) args=(--steps "@$steps") ;;
    esac
    update "${steps%.steps}.expected" "$("$weft" show "$op" --shape "$shape" "${args[@]}" --target $target --print loop | tail -n +2)"
    for exp in "${steps%.steps}".after-*.expected; do
        [[ -e "$exp" ]] || continue
        pass=${exp##*.after-}
        pass=${pass%.expected}
        update "$exp" "$(WEFT_DUMP=$pass "$weft" show "$op" --shape "$shape" "${args[@]}" --target $target --print loop 2>&1 >/dev/null |
            tail -n +2)"
    done
done
# CUDA source (tests/golden/cuda/NAME.steps -> NAME.cu; needs the CUDA target): what
# `weft show --target cuda:sm_90 --print cuda` prints, without its title line.
for steps in "$here"/cuda/*.steps; do
    read -r _ op shape < "$steps"
    body=$(tail -n +2 "$steps")
    case "$body" in
    default) args=(--schedule default) ;;
    *) args=(--steps "@$steps") ;;
    esac
    update "${steps%.steps}.cu" "$("$weft" show "$op" --shape "$shape" "${args[@]}" --target cuda:sm_90 --print cuda | tail -n +2)"
done
# HIP source (tests/golden/hip/NAME.steps -> NAME.hip; needs the HIP target): what
# `weft show --target hip:gfx90a --print hip` prints, without its title line.
for steps in "$here"/hip/*.steps; do
    read -r _ op shape < "$steps"
    body=$(tail -n +2 "$steps")
    case "$body" in
    default) args=(--schedule default) ;;
    *) args=(--steps "@$steps") ;;
    esac
    update "${steps%.steps}.hip" "$("$weft" show "$op" --shape "$shape" "${args[@]}" --target hip:gfx90a --print hip | tail -n +2)"
done
