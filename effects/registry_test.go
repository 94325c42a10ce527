package effects

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var (
	knownRoles = []Role{RoleValue, RoleRead, RoleReadTree, RoleWrite, RoleCreate, RoleTarget, RoleDelete, RoleDeleteTree, RoleConvert, RoleMove,
		RoleMeta, RoleDir, RoleScript, RoleCommand, RoleProgram, RoleRemote, RoleSubcommand}
	knownSettings = []Setting{SetParents, SetRecursive, SetInPlace, SetDryRun, SetKeep, SetStdout, SetDecompress, SetList, SetRemove,
		SetSend, SetMirror, SetDirectory, SetCompile, SetQuery, SetLoginShell, SetEdit, SetRemoteName, SetCommandString, SetChange}
	knownClasses = []CommandClass{ClassQuiet, ClassReads, ClassWrites, ClassDeletes, ClassRuns, ClassNetwork, ClassSystem,
		ClassPackages, ClassShell}
)

// TestRegistry checks the command table: no name listed twice, every entry
// well formed and reachable, and every setting and role it uses declared
// and used by some entry.
func TestRegistry(t *testing.T) {
	names := map[string]int{}
	usedRoles, usedSettings := map[Role]bool{}, map[Setting]bool{}
	for i, s := range commands().table {
		if j, dup := names[s.Name]; dup {
			t.Errorf("%q is listed twice (entries %d and %d)", s.Name, j, i)
		}
		names[s.Name] = i
		if e := lookup(s.Name); e == nil || e.spec != &commands().table[i] {
			t.Errorf("%q: lookup does not find its entry", s.Name)
		}
		if !slices.Contains(knownClasses, s.Class) {
			t.Errorf("%q: class %q is not declared", s.Name, s.Class)
		}
		switch s.Class {
		case ClassRuns, ClassNetwork, ClassSystem, ClassPackages, ClassShell:
			if s.analyze == nil {
				t.Errorf("%q: a %s command needs an analysis of its own; its roles alone run nothing", s.Name, s.Class)
			}
		}
		if s.Class == ClassSystem && s.Does == "" {
			t.Errorf("%q: a system command must say what it does", s.Name)
		}
		opNames := map[string]bool{}
		many := 0
		for _, o := range s.Operands {
			usedRoles[o.Role] = true
			if !slices.Contains(knownRoles, o.Role) {
				t.Errorf("%q: operand %s has undeclared role %q", s.Name, o.Name, o.Role)
			}
			if o.Many {
				many++
			}
			opNames[o.Name] = true
		}
		if many > 1 {
			t.Errorf("%q: %d operands repeat; at most one may", s.Name, many)
		}
		spellings := map[string]bool{}
		for _, o := range s.Options {
			if len(o.Names) == 0 {
				t.Errorf("%q: an option without a name", s.Name)
			}
			for _, n := range o.Names {
				if spellings[n] {
					t.Errorf("%q: option %s is listed twice", s.Name, n)
				}
				spellings[n] = true
			}
			if o.Arg != "" {
				usedRoles[o.Arg] = true
				if !slices.Contains(knownRoles, o.Arg) {
					t.Errorf("%q: option %v has undeclared role %q", s.Name, o.Names, o.Arg)
				}
			}
			if o.Sets != "" {
				usedSettings[o.Sets] = true
				if !slices.Contains(knownSettings, o.Sets) {
					t.Errorf("%q: option %v sets undeclared %q", s.Name, o.Names, o.Sets)
				}
			}
			if o.Fills != "" && !opNames[o.Fills] {
				t.Errorf("%q: option %v fills operand %s, which the entry lacks", s.Name, o.Names, o.Fills)
			}
			if o.OptionalArg && o.Arg == "" {
				t.Errorf("%q: option %v has an optional value but takes none", s.Name, o.Names)
			}
		}
		// Reachable: analysing the bare command consults this entry, not
		// the unknown-command fallback. (A backslash keeps a keyword such
		// as time or let a command.)
		r, err := Analyze(`\`+s.Name, Dir("/h/p"))
		if err != nil {
			t.Errorf("%q: %v", s.Name, err)
			continue
		}
		for _, f := range r.Findings {
			if f.Kind == "unknown-command" && strings.Contains(f.Reason, "is not a command nash knows") {
				t.Errorf("%q: analysed as unknown", s.Name)
			}
		}
	}
	for _, r := range knownRoles {
		if !usedRoles[r] {
			t.Errorf("role %q is declared but no entry uses it", r)
		}
	}
	for _, s := range knownSettings {
		if !usedSettings[s] {
			t.Errorf("setting %q is declared but no option sets it", s)
		}
	}
	if e := lookup("mkfs.ext4"); e == nil || e.spec.Name != "mkfs" {
		t.Errorf("mkfs.ext4 is not mkfs")
	}
	if e := lookup("/usr/bin/rm"); e == nil || e.spec.Name != "rm" {
		t.Errorf("/usr/bin/rm is not rm")
	}
}

// TestRegistryNoDeadBranches checks that every command name the analyses
// single out (c.name == "x", case "x": in a switch on c.name) has an entry
// whose analysis is the one that tests it, so that no branch is dead.
func TestRegistryNoDeadBranches(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "handlers.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	analyses := map[string]bool{}
	for _, s := range commands().table {
		if s.analyze != nil {
			analyses[funcName(s.analyze)] = true
		}
	}
	isName := func(e ast.Expr) bool {
		sel, ok := e.(*ast.SelectorExpr)
		return ok && sel.Sel.Name == "name"
	}
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		var lits []*ast.BasicLit
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BinaryExpr:
				if (n.Op == token.EQL || n.Op == token.NEQ) && isName(n.X) {
					if l, ok := n.Y.(*ast.BasicLit); ok {
						lits = append(lits, l)
					}
				}
			case *ast.SwitchStmt:
				if n.Tag != nil && isName(n.Tag) {
					for _, s := range n.Body.List {
						for _, e := range s.(*ast.CaseClause).List {
							if l, ok := e.(*ast.BasicLit); ok {
								lits = append(lits, l)
							}
						}
					}
				}
			}
			return true
		})
		for _, l := range lits {
			name, _ := strconv.Unquote(l.Value)
			e := lookup(name)
			if e == nil {
				t.Errorf("%s: %s tests for %q, which has no entry: a dead branch", fset.Position(l.Pos()), fn.Name.Name, name)
				continue
			}
			if !analyses[fn.Name.Name] && !slices.ContainsFunc(slices.Collect(maps.Keys(analyses)), func(a string) bool { return calls(f, a, fn.Name.Name) }) {
				continue // not an analysis of its own (printed, for any command in a pipeline)
			}
			if e.spec.analyze == nil {
				t.Errorf("%s: %s tests for %q, whose entry has no analysis of its own: a dead branch", fset.Position(l.Pos()), fn.Name.Name, name)
				continue
			}
			// The entry's analysis must be this function, or one it is
			// called from (archive calls compressFiles).
			if got := funcName(e.spec.analyze); got != fn.Name.Name && !calls(f, got, fn.Name.Name) {
				t.Errorf("%s: %s tests for %q, whose entry is analysed by %s: a dead branch", fset.Position(l.Pos()), fn.Name.Name, name, got)
			}
		}
	}
}

// funcName is the name of an analysis function.
func funcName(f func(*invocation)) string {
	n := runtime.FuncForPC(reflect.ValueOf(f).Pointer()).Name()
	return n[strings.LastIndexByte(n, '.')+1:]
}

// calls reports whether the function caller calls callee directly, in f.
func calls(f *ast.File, caller, callee string) bool {
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Body == nil || fn.Name.Name != caller {
			continue
		}
		found := false
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			if c, ok := n.(*ast.CallExpr); ok {
				switch f := c.Fun.(type) {
				case *ast.Ident:
					found = found || f.Name == callee
				case *ast.SelectorExpr:
					found = found || f.Sel.Name == callee
				}
			}
			return true
		})
		return found
	}
	return false
}

// TestRegistryRoles checks that every entry's spec says what its analysis
// does: a command line built from the spec alone (each operand, each
// option with a path value) is analysed, and each path argument must be
// used as its role says. This is what a generator of test inputs relies
// on. Entries whose paths depend on more than roles can say are listed in
// rolesBeyondSpec with the reason.
func TestRegistryRoles(t *testing.T) {
	for _, s := range commands().table {
		if why, ok := rolesBeyondSpec[s.Name]; ok {
			if why == "" {
				t.Errorf("%s: listed in rolesBeyondSpec without a reason", s.Name)
			}
			continue
		}
		var args []string
		want := map[string][2]any{} // path -> access, recursive
		n := 0
		word := func(r Role) string {
			n++
			w := fmt.Sprintf("a%d", n)
			if acc, rec, ok := r.access(false); ok {
				want["/h/p/"+w] = [2]any{acc, rec}
			} else if r == RoleCommand {
				w = "true"
			} else if r == RoleSubcommand || r == RoleRemote || r == RoleValue || r == RoleProgram || r == RoleScript || r == RoleDir {
				w = "v" + w
			}
			return w
		}
		for i, o := range s.Operands {
			if o.Optional && !hasPathRole(o.Role) || i == 0 && o.Role == RoleSubcommand && rolesTestLead[s.Name] != "" {
				continue
			}
			args = append(args, word(o.Role))
			if o.Role == RoleCommand {
				break
			}
		}
		check := func(line string) {
			r, err := Analyze(line, Dir("/h/p"), Home("/h"))
			if err != nil {
				t.Errorf("%s: %v", line, err)
				return
			}
			got := map[string][2]any{}
			for _, u := range r.Paths {
				if _, ok := want[u.Path]; ok {
					got[u.Path] = [2]any{u.Access, u.Recursive}
				}
			}
			for p, w := range want {
				if got[p] != w {
					t.Errorf("%s: %s is used as %v, want %v (%s's spec)", line, p, got[p], w, s.Name)
				}
			}
		}
		name := `\` + s.Name + " " + rolesTestLead[s.Name]
		if len(want) > 0 {
			check(name + " " + strings.Join(args, " "))
		}
		for _, o := range s.Options {
			if !hasPathRole(o.Arg) || o.OptionalArg || o.Fills != "" {
				continue
			}
			base := want
			want = map[string][2]any{}
			v := word(o.Arg)
			check(name + " " + o.Names[0] + " " + v + " " + strings.Join(args, " "))
			want = base
		}
	}
}

func hasPathRole(r Role) bool {
	_, _, ok := r.access(false)
	return ok
}

// rolesTestLead is what the command line of an entry needs first for its
// roles to hold: a mode or subcommand that the spec's operands take as
// given.
var rolesTestLead = map[string]string{
	"tar": "-c", "gio": "remove", "7z": "a", "7za": "a", "rar": "a", "unrar": "x",
}

// rolesBeyondSpec are the entries whose paths the roles cannot say
// alone, and why.
var rolesBeyondSpec = map[string]string{
	"rename": "rename takes FROM TO FILE... (util-linux) or PERLEXPR FILE... (perl), told apart by the expression",
}

// TestCommandsExported checks that Commands and LookupCommand give copies
// that survive JSON, so that a caller (nash test) can read and keep them.
func TestCommandsExported(t *testing.T) {
	all := Commands()
	if len(all) != len(commands().table) {
		t.Fatalf("Commands returns %d entries, the table holds %d", len(all), len(commands().table))
	}
	for i := 1; i < len(all); i++ {
		if all[i-1].Name >= all[i].Name {
			t.Fatalf("Commands is not sorted: %q before %q", all[i-1].Name, all[i].Name)
		}
	}
	cp, ok := LookupCommand("cp")
	if !ok {
		t.Fatal("cp is not known")
	}
	b, err := json.Marshal(cp)
	if err != nil {
		t.Fatal(err)
	}
	var back CommandSpec
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Name != "cp" || len(back.Operands) != 2 || back.Operands[1].Role != RoleTarget || back.Operands[0].Role != RoleRead || !back.Operands[0].Many {
		t.Errorf("cp's spec after JSON: %+v", back)
	}
	cp.Options[0].Names[0] = "-X"
	cp.Operands[0].Role = RoleDelete
	again, _ := LookupCommand("cp")
	if again.Options[0].Names[0] == "-X" || again.Operands[0].Role == RoleDelete {
		t.Error("changing what LookupCommand returned changed the table")
	}
	if _, ok := LookupCommand("frobnicate"); ok {
		t.Error("frobnicate is known")
	}
}

// TestCommandTableIndexes: every entry of the table indexes (lookup builds
// them one at a time, on first use), and no command is listed twice.
func TestCommandTableIndexes(t *testing.T) {
	idx := buildIndex(commands().table)
	if len(idx) != len(commands().table) {
		t.Fatalf("%d entries for %d commands", len(idx), len(commands().table))
	}
	for name, want := range idx {
		got := lookup(name)
		if got == nil || got.spec != want.spec || got.opts.arg != want.opts.arg || len(got.byName) != len(want.byName) {
			t.Fatalf("lookup(%q) differs from the full index", name)
		}
	}
}
