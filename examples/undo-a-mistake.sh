#!/usr/bin/env bash
# A session you can run: delete a folder by mistake, see exactly what went,
# and get it back. It works in a fresh temporary directory and its own state
# dir, so it touches nothing of yours.
#
#   make build && PATH=$PWD/bin:$PATH examples/undo-a-mistake.sh
set -euo pipefail

work=$(mktemp -d)
export NASH_STATE_DIR="$work/.state"
cd "$work"
mkdir -p notes/2025 && echo "buy milk" > notes/todo.txt && echo "q1 plan" > notes/2025/plan.md

echo "== a script that deletes more than intended, committed without asking"
nash run --yes -- 'rm -r notes; echo "fresh start" > README'

echo "== what is left"
ls -A

echo "== the log: every commit is a transaction"
nash log

echo "== undo the last transaction"
nash undo
cat notes/todo.txt notes/2025/plan.md
test ! -e README

echo "== an aborted run changes nothing (answer 'a' at the prompt)"
echo a | nash run -- 'rm -r notes' || test $? -eq 3
test -e notes/todo.txt

rm -rf "$work"
echo "== done"
