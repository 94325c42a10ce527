package planner

import (
	"errors"
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// ScriptError is a script from the model that does not parse as bash.
type ScriptError struct {
	Script string
	Err    error // a syntax.ParseError or similar
}

func (e *ScriptError) Error() string {
	return fmt.Sprintf("script does not parse as bash: %v", e.Err)
}

// Unwrap returns the parse error.
func (e *ScriptError) Unwrap() error { return e.Err }

// CheckSyntax parses script in the bash dialect and returns a *ScriptError
// if it does not parse.
func CheckSyntax(script string) error {
	if strings.TrimSpace(script) == "" {
		return &ScriptError{Script: script, Err: errors.New("empty script")}
	}
	p := syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(false))
	if _, err := p.Parse(strings.NewReader(script), ""); err != nil {
		return &ScriptError{Script: script, Err: err}
	}
	return nil
}
