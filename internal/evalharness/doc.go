// Package evalharness measures a planner on InterCode-ALFA: each of the
// benchmark's 300 natural-language tasks goes through the planner, and the
// predicted command and the task's gold command run on the task's fixture
// in the sandbox. The prediction is correct when the two runs are
// execution-equivalent.
//
// # Fixtures
//
// Each of the five fixture file systems is built once, natively, under a
// work directory, as its Dockerfile builds it: the setup script copied to
// the fixture's root and run there (intercode.Build, with /testbed,
// /system, /workspace, /backup and /index.html mapped below the root).
// Both commands are mapped the same way and run with the fixture's root as
// their working directory (the containers' WORKDIR is /), with the
// Dockerfile's ENV settings (mapped too), the C locale, no network, and
// the benchmark's shell: /bin/sh for fixture 5, bash for the others. A
// sandboxed run never changes the live files, so every run sees the
// fixture as built; both runs are aborted once compared.
//
// A task whose gold command cannot run here, because a command it needs is
// not installed (the shell says "command not found"; tree, cpio, dig and
// cal are missing on a stock Debian), is skipped: not scored, and listed
// with the reason.
//
// # Equivalence
//
// Two runs are equivalent when their file system changes match and a
// Judge finds their outputs equivalent; exit codes are not compared, as
// InterCode does not compare them either.
//
//   - File system: the sandbox's observed change sets name the same paths
//     (anywhere, not only in the fixture) with the same kind of change
//     (created, modified, deleted, type changed, metadata changed); where a
//     path exists afterwards, its type, permission bits, owner, group and
//     symlink target are the same, and a regular file's new bytes are
//     identical. One thing is dropped before comparing: a directory whose
//     only change is its modification time (what creating and removing a
//     temporary file inside it leaves). InterCode's git-based diff does not
//     see directories' times either. A regular file whose only change is
//     its time (touch) still counts. Every judge requires this.
//   - Output: standard output and standard error together, in the order
//     written (InterCode's docker exec returns them so), with trailing
//     spaces, tabs and carriage returns removed from every line and
//     trailing empty lines dropped, then judged:
//
// Exact requires the outputs to be equal: order, case and inner spacing
// count, so `ls` and `ls -l` differ, and a command that fails with a
// message differs from one that prints nothing.
//
// Similar, the default, is a deterministic lexical judge, lenient as the
// benchmark's own judges are. It reads each output as records, one a
// line, made of tokens (words, numbers, absolute paths; lower-cased;
// punctuation separates). A token weighs log(1 + N/df), an inverse
// document frequency over the outputs' lines, so a column repeated on
// every line weighs little and a file name on one line weighs most. A
// line matches a line of the other output when more than half the weight
// of the lighter one is found in the other (a name also matches a path
// with that base name), and, if both name paths, they name the same ones;
// lines pair greedily, best first, each once. The outputs are similar when
// more than half of each one's weight lies in matched lines: the same
// records, in any order, with more or fewer columns (ls and ls -l, md5sum
// with and without names, grep -l and grep -H, uname -r and uname -a, two
// messages for one failure) are accepted; other files, other numbers, a
// part of the lines (head for cat) are not. When both runs made the same,
// non-empty changes, lines that name only paths the runs changed or that
// existed on the fixture are reports of that work (cp -v, mkdir -v, tar -v,
// find -print -delete) and are set aside on both sides first. Outputs
// larger than the kept head compare exactly. Order is not compared, so
// sort and cat of the same lines agree: a known weakness, as is a short
// output found inside a longer single line (hostname in uname -a).
//
// Model asks a language model, given the task, both commands and both
// outputs, whether the outputs answer the task alike: InterCode-ALFA's
// execution-plus-LLM judge. It is asked only when the changes match and
// the outputs differ.
//
// Measured with replayed answers on the 288 tasks that run here (see the
// tests): the gold commands score 96% exact, 99% similar; the second gold
// commands 61% exact, 85% similar (the rest change files differently,
// print other facts, or the same facts too differently for a lexical
// judge); `true` scores 5% under both; another task's gold 3% exact, 7%
// similar. InterCode-ALFA's published figures (gpt-4o about 74%) use a
// GPT-4 judge.
//
// When a prediction does not match, the gold command runs once more; if
// that run does not match the first, the task is marked Unstable (its
// output depends on the clock, process ids, memory use...), and it still
// counts as wrong.
//
// # Errors
//
// A planner that gives no script, refuses, asks a question or fails on one
// task makes that task wrong, with the reason. An error matching
// planner.ErrNoProvider, a cancelled context, or a sandbox that cannot run
// at all ends Run with an error.
package evalharness
