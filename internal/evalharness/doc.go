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
// Two runs are equivalent when both of these hold; exit codes are not
// compared, as InterCode does not compare them either.
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
//     its time (touch) still counts.
//   - Output: standard output and standard error together, in the order
//     written (InterCode's docker exec returns them so), byte-equal after
//     removing trailing spaces, tabs and carriage returns from every line
//     and dropping trailing empty lines. Nothing else is normalised: order,
//     case and inner spacing count, so `ls` and `ls -l` differ, and a
//     command that fails with a message differs from one that prints
//     nothing.
//
// InterCode-ALFA scores the output part differently: when the outputs
// differ it asks GPT-4 whether the prediction accomplishes the task. Its
// published figures (gpt-4o about 74%) include that judge; this package
// has none, so its accuracy is stricter and comes out lower. Even the
// benchmark's own second gold commands are execution-equivalent to the
// first on only about two thirds of the tasks (ls -l for ls, cp -v for cp).
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
