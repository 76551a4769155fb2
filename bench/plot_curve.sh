#!/usr/bin/env bash
# Plots a tuning curve written by `weft tune --curve CURVE.csv` (trials, seconds, estimated
# model latency in ms) as a PNG: latency against tuning time, and against trials.
#   usage: bench/plot_curve.sh CURVE.csv OUT.png [TITLE]
# Needs gnuplot (apt-get install gnuplot-nox); it is a benchmark tool, not a build dependency.
set -euo pipefail
csv=$1
png=$2
title=${3:-weft tune}
command -v gnuplot >/dev/null || { echo "plot_curve.sh: gnuplot is not installed (apt-get install gnuplot-nox)" >&2; exit 2; }
gnuplot <<GP
set datafile separator ","
set terminal pngcairo size 1000,420 font "sans,10"
set output "$png"
set multiplot layout 1,2 title "$title"
set grid
set key off
set xlabel "tuning time (s)"
set ylabel "estimated latency (ms)"
plot "$csv" using 2:3 every ::1 with linespoints pt 7 ps 0.5 lw 2
set xlabel "measurements"
plot "$csv" using 1:3 every ::1 with linespoints pt 7 ps 0.5 lw 2
unset multiplot
GP
echo "wrote $png"
