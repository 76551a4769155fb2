#!/usr/bin/env bash
# Regenerates tests/golden/lower/*.expected from the *.steps cases with `weft show` and prints
# the diff for review. The first line of a case is "# OP SHAPE"; the rest is step text, or one
# line "default"/"manual" for a built-in schedule. Usage: tests/golden/regen.sh [build dir]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
weft=${1:-$here/../../build/debug}/weft
for steps in "$here"/lower/*.steps; do
    read -r _ op shape < "$steps"
    body=$(tail -n +2 "$steps")
    case "$body" in
    default|manual) args=(--schedule "$body") ;;
    *) args=(--steps "@$steps") ;;
    esac
    exp=${steps%.steps}.expected
    new=$("$weft" show "$op" --shape "$shape" "${args[@]}" --target interp --print loop | tail -n +2)
    if [[ -f "$exp" ]] && ! diff -u "$exp" <(printf '%s\n' "$new"); then echo "^^ $exp changed"; fi
    printf '%s\n' "$new" > "$exp"
done
