#!/bin/sh
# Writes the man pages and completion scripts that ptk-docs makes from the command tables:
#   OUT/man/ptkd.8 ptkd.conf.5 ptk.8 ptk-send.1
#   OUT/bash/PROGRAM  OUT/zsh/_PROGRAM  OUT/fish/PROGRAM.fish   (ptk, ptk-send, ptkd)
# Usage: scripts/make-docs.sh BINDIR OUT   (BINDIR holds ptk-docs, e.g. .build/release)
set -eu
bin=$1
out=$2
cd "$(dirname "$0")/.."
date=$(scripts/version.sh --date)
mkdir -p "$out/man" "$out/bash" "$out/zsh" "$out/fish"
for page in ptkd.8 ptkd.conf.5 ptk.8 ptk-send.1; do
    "$bin/ptk-docs" man "${page%.*}" --template "man/$page.in" --date "$date" > "$out/man/$page"
done
for program in ptkd ptk ptk-send; do
    "$bin/ptk-docs" bash "$program" > "$out/bash/$program"
    "$bin/ptk-docs" zsh "$program" > "$out/zsh/_$program"
    "$bin/ptk-docs" fish "$program" > "$out/fish/$program.fish"
done
