package shell

import "strings"

// KeyMap names the keys of the review and summary screens, each as one or
// more key names as bubbletea spells them ("enter", "e", "ctrl+e").
type KeyMap struct {
	Run     []string
	Edit    []string
	Revise  []string
	Explain []string
	Abort   []string
	Commit  []string
	Diff    []string
	Pick    []string
	Test    []string // run the script on other starting states (nash test)
	Example []string // give an example: files before, files or output after
}

// DefaultKeys are the keys named in :help.
func DefaultKeys() KeyMap {
	return KeyMap{
		Run:     []string{"enter", "y"},
		Edit:    []string{"e"},
		Revise:  []string{"r"},
		Explain: []string{"x"},
		Abort:   []string{"a", "n"}, // never esc: a vim reflex, pressed by habit
		Commit:  []string{"c"},
		Diff:    []string{"d"},
		Pick:    []string{"p"},
		Test:    []string{"t"},
		Example: []string{"g"},
	}
}

// Merge returns k with every binding that o sets replaced by o's.
func (k KeyMap) Merge(o KeyMap) KeyMap {
	set := func(dst *[]string, src []string) {
		if len(src) > 0 {
			*dst = src
		}
	}
	set(&k.Run, o.Run)
	set(&k.Edit, o.Edit)
	set(&k.Revise, o.Revise)
	set(&k.Explain, o.Explain)
	set(&k.Abort, o.Abort)
	set(&k.Commit, o.Commit)
	set(&k.Diff, o.Diff)
	set(&k.Pick, o.Pick)
	set(&k.Test, o.Test)
	set(&k.Example, o.Example)
	return k
}

// is reports whether key is one of keys.
func is(key string, keys []string) bool {
	for _, k := range keys {
		if strings.EqualFold(k, key) {
			return true
		}
	}
	return false
}

// first is the first key of keys, for hints.
func first(keys []string) string {
	if len(keys) == 0 {
		return "?"
	}
	return keys[0]
}
