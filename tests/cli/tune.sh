#!/usr/bin/env bash
# weft tune and weft db end to end: records are kept, resumable after kill -9, shared by two
# concurrent processes without loss, and served by weft run / weft bench.
# Usage: tune.sh PATH/TO/weft
set -u
weft=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
check() { # description, command...
    local what=$1
    shift
    if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fails=$((fails + 1)); fi
}
total() { "$weft" db ls "$1" | awk 'NR > 1 { t += $3 } END { print t + 0 }'; }

# a small tuning run fills the database, and a rerun with the same budget measures nothing new
"$weft" tune --op matmul --shape 64,64,48 --db "$tmp/a.db" --trials 12 --seed 7 --threads 1 --curve "$tmp/curve.csv" > "$tmp/out1" 2>&1
check "tune exits 0" grep -q "estimated model latency" "$tmp/out1"
check "12 measurements recorded" test "$(total "$tmp/a.db")" = 12
check "curve has rows" test "$(wc -l < "$tmp/curve.csv")" -ge 2
"$weft" tune --op matmul --shape 64,64,48 --db "$tmp/a.db" --trials 12 --seed 7 --threads 1 > "$tmp/out2" 2>&1
check "rerun resumes (12 already there)" grep -q "12 measurement(s) already" "$tmp/out2"
check "rerun adds nothing" test "$(total "$tmp/a.db")" = 12
check "best record is printable" sh -c "'$weft' db best '$tmp/a.db' matmul --shape 64,64,48 --threads 1 | grep -q 'split C'"
check "records are kept per thread count" sh -c "'$weft' db best '$tmp/a.db' matmul --shape 64,64,48 --threads 2 | grep -q 'no record'"
check "bench op shows the tuned row" sh -c "'$weft' bench op matmul --shape 64,64,48 --threads 1 --min-time 0 --db '$tmp/a.db' --csv | grep -q ',tuned,'"

# export / import round trip
"$weft" db export "$tmp/a.db" > "$tmp/a.txt"
"$weft" db import "$tmp/b.db" "$tmp/a.txt" > /dev/null
check "import reproduces the records" test "$(total "$tmp/b.db")" = 12

# two tuners on one database at once lose no records
"$weft" tune --op matmul --shape 32,64,32 --db "$tmp/c.db" --trials 16 --seed 1 > "$tmp/p1" 2>&1 &
p1=$!
"$weft" tune --op matmul --shape 48,32,16 --db "$tmp/c.db" --trials 16 --seed 2 > "$tmp/p2" 2>&1 &
p2=$!
wait $p1; r1=$?
wait $p2; r2=$?
check "both concurrent tuners succeed" test $r1 -eq 0 -a $r2 -eq 0
check "32 records from two concurrent tuners" test "$(total "$tmp/c.db")" = 32
check "integrity after concurrent writers" sh -c "'$weft' db check '$tmp/c.db' | grep -qx ok"

# kill -9 in the middle of tuning, then resume
"$weft" tune --op matmul --shape 96,64,64 --db "$tmp/k.db" --trials 60 --seed 3 > "$tmp/k1" 2>&1 &
pk=$!
sleep 3
kill -9 $pk 2>/dev/null
wait $pk 2>/dev/null
check "database readable after kill -9" sh -c "'$weft' db check '$tmp/k.db' | grep -qx ok"
before=$(total "$tmp/k.db")
"$weft" tune --op matmul --shape 96,64,64 --db "$tmp/k.db" --trials 60 --seed 3 > "$tmp/k2" 2>&1
check "resume picks up the $before earlier measurements" grep -q "$before measurement(s) already" "$tmp/k2"
check "resumed run reaches the budget" test "$(total "$tmp/k.db")" -ge 60

# refusals: a foreign file is not a schedule database
head -c 4096 /dev/urandom > "$tmp/junk.db"
check "garbage file refused" sh -c "! '$weft' db ls '$tmp/junk.db' 2> '$tmp/err' && grep -q 'not a weft schedule database' '$tmp/err'"

echo "tune: $fails failure(s)"
exit $((fails > 0))
