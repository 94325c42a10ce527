package planner

import (
	"errors"
	"fmt"
	"strings"

	"github.com/nash-shell/nash/effects"
)

// ScriptError is a script from the model that does not parse as bash.
type ScriptError struct {
	Script string
	Err    error // an *effects.ParseError, or why the script is empty
}

// Error gives the parse error.
func (e *ScriptError) Error() string {
	return fmt.Sprintf("script does not parse as bash: %v", e.Err)
}

// Unwrap returns the parse error.
func (e *ScriptError) Unwrap() error { return e.Err }

// check analyzes script with effects.Analyze, resolving paths against cwd
// and home when known. A script that is empty or does not parse gives a
// *ScriptError.
func check(script, cwd, home string) (*effects.Report, error) {
	if strings.TrimSpace(script) == "" {
		return nil, &ScriptError{Script: script, Err: errors.New("empty script")}
	}
	var opts []effects.Option
	if cwd != "" {
		opts = append(opts, effects.Dir(cwd))
	}
	if home != "" {
		opts = append(opts, effects.Home(home))
	}
	rep, err := effects.Analyze(script, opts...)
	if err != nil {
		return nil, &ScriptError{Script: script, Err: err}
	}
	return rep, nil
}
