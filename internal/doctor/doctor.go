// Package doctor checks what nash needs on this machine and says how to
// fix what is missing: user namespaces (naming Ubuntu's AppArmor
// restriction), overlayfs, bash, free space for undo layers, the sandbox
// itself, the configured model, the index. nash doctor prints its results;
// the first interactive start without a model uses the model check.
//
// Every check reads the machine through a Machine, whose functions a test
// replaces to play a machine without user namespaces, a full disk or a
// model that does not answer. Checks return structured results and print
// nothing.
package doctor

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
)

// Status is how a check came out.
type Status int

const (
	// OK: nash has what it needs.
	OK Status = iota
	// Warn: nash works, with a limit the person may want to lift.
	Warn
	// Fail: something nash needs is missing; Fix says what to do.
	Fail
	// Skip: the check could not be made (nothing to check it with).
	Skip
)

// String names the status: "ok", "warn", "fail", "skip".
func (s Status) String() string {
	switch s {
	case OK:
		return "ok"
	case Warn:
		return "warn"
	case Fail:
		return "fail"
	case Skip:
		return "skip"
	}
	return "Status(" + strconv.Itoa(int(s)) + ")"
}

// MarshalJSON writes the status as its name.
func (s Status) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

// Result is what one check found.
type Result struct {
	// Check is the check's name, as in Checks: "userns", "overlayfs",
	// "bash", "space", "sandbox", "model", "index".
	Check  string `json:"check"`
	Status Status `json:"status"`
	// Detail says what was found, in one line.
	Detail string `json:"detail"`
	// Cause names a known cause of a failure ("apparmor",
	// "unprivileged_userns_clone", "max_user_namespaces", "old-kernel",
	// "no-provider", "not-pulled", ...), for programs; "" otherwise.
	Cause string `json:"cause,omitempty"`
	// Fix lists what to do, in order: commands to run or steps to take.
	Fix []string `json:"fix,omitempty"`
}

// Check is one thing nash needs.
type Check struct {
	Name string
	Run  func(ctx context.Context) Result
}

// Run runs the checks in order and returns their results. A check still
// running when ctx is done gives up with a failure that says so.
func Run(ctx context.Context, checks []Check) []Result {
	out := make([]Result, 0, len(checks))
	for _, c := range checks {
		if err := ctx.Err(); err != nil {
			out = append(out, Result{Check: c.Name, Status: Skip, Detail: fmt.Sprintf("not checked: %v", err)})
			continue
		}
		r := c.Run(ctx)
		r.Check = c.Name
		out = append(out, r)
	}
	return out
}

// Worst returns the worst status among results (Fail over Warn over OK;
// Skip counts as OK).
func Worst(results []Result) Status {
	w := OK
	for _, r := range results {
		switch {
		case r.Status == Fail:
			return Fail
		case r.Status == Warn:
			w = Warn
		}
	}
	return w
}
