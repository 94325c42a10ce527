package effects

import (
	"fmt"
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func file(size int64) *Object {
	return &Object{Type: TypeFile, Size: size, Mode: 0o644, UID: 1000, GID: 1000}
}
func dir() *Object { return &Object{Type: TypeDir, Mode: 0o755, UID: 1000, GID: 1000} }
func symlink(target string) *Object {
	return &Object{Type: TypeSymlink, Mode: 0o777, UID: 1000, GID: 1000, Target: target}
}

// bigTree returns a created directory root with n files of size bytes each
// spread over subdirectories of 100 files.
func bigTree(root string, n int, size int64) []Change {
	out := []Change{{Path: root, Kind: Created, After: dir()}}
	for i := 0; i < n; i++ {
		if i%100 == 0 {
			out = append(out, Change{Path: fmt.Sprintf("%s/d%03d", root, i/100), Kind: Created, After: dir()})
		}
		out = append(out, Change{Path: fmt.Sprintf("%s/d%03d/f%05d.o", root, i/100, i), Kind: Created, After: file(size)})
	}
	return out
}

func TestWriteSummary(t *testing.T) {
	tests := []struct {
		name    string
		changes []Change
		opts    SummaryOptions
		want    string
	}{
		{
			name: "empty",
			want: "no changes\n",
		},
		{
			name: "one of each kind",
			changes: []Change{
				{Path: "/p/new.txt", Kind: Created, After: file(1200)},
				{Path: "/p/main.go", Kind: Modified, Before: file(1200), After: file(1340)},
				{Path: "/p/old.txt", Kind: Deleted, Before: file(45)},
				{Path: "/p/run.sh", Kind: MetaChanged, Before: file(10), After: &Object{Type: TypeFile, Size: 10, Mode: 0o755, UID: 1000, GID: 1000}, Meta: []string{"mode"}},
				{Path: "/p/cache", Kind: TypeChanged, Before: file(3), After: dir()},
				{Path: "/p/link", Kind: MetaChanged, Before: symlink("a"), After: symlink("b"), Meta: []string{"target"}},
			},
			want: `6 changes: 1 created, 1 modified, 1 deleted, 1 type changed, 2 metadata changed
/p/
  replaced cache/  3 B → directory
  changed  link  target a → b
  modified main.go  1.2 kB → 1.3 kB
  created  new.txt  1.2 kB
  deleted  old.txt  45 B
  changed  run.sh  mode rw-r--r-- → rwxr-xr-x
`,
		},
		{
			name: "owner, setuid and inferred meta",
			changes: []Change{
				{Path: "/usr/bin/x", Kind: MetaChanged, Before: file(1), After: &Object{Type: TypeFile, Size: 1, Mode: 0o755 | fs.ModeSetuid}},
				{Path: "/tmp/s", Kind: MetaChanged, Before: &Object{Type: TypeDir, Mode: 0o777}, After: &Object{Type: TypeDir, Mode: 0o1777}, Meta: []string{"mode", "mtime", "xattr"}},
			},
			want: `2 changes: 2 metadata changed
/tmp/
  changed  s/  mode rwxrwxrwx → rwxrwxrwt, times, extended attributes
/usr/bin/
  changed  x  mode rw-r--r-- → rwsr-xr-x, owner 1000:1000 → 0:0
`,
		},
		{
			name:    "large new tree collapsed",
			changes: append(bigTree("/p/build", 2341, 37600), Change{Path: "/p/build.log", Kind: Created, After: file(10)}),
			want: `2,367 changes: 2,367 created
/p/
  created  build/  with 2,341 files, 24 dirs, 88 MB
  created  build.log  10 B
`,
		},
		{
			name: "small new tree listed",
			changes: []Change{
				{Path: "/p/out", Kind: Created, After: dir()},
				{Path: "/p/out/a", Kind: Created, After: file(1)},
				{Path: "/p/out/b", Kind: Created, After: symlink("a")},
			},
			want: `3 changes: 3 created
/p/
  created  out/  directory
/p/out/
  created  a  1 B
  created  b  symlink → a
`,
		},
		{
			name: "deleted tree collapsed",
			changes: func() []Change {
				cs := []Change{{Path: "/p/node_modules", Kind: Deleted, Before: dir()}}
				for i := 0; i < 12; i++ {
					cs = append(cs, Change{Path: fmt.Sprintf("/p/node_modules/m%02d.js", i), Kind: Deleted, Before: file(1000)})
				}
				return cs
			}(),
			want: `13 changes: 13 deleted
/p/
  deleted  node_modules/  with 12 files, 12 kB
`,
		},
		{
			name: "collapse disabled",
			changes: []Change{
				{Path: "/p/d", Kind: Created, After: dir()},
				{Path: "/p/d/a", Kind: Created, After: file(1)},
			},
			opts: SummaryOptions{CollapseAt: 1},
			want: `2 changes: 2 created
/p/
  created  d/  with 1 file, 1 B
`,
		},
		{
			name: "hostile names escaped and quoted",
			changes: []Change{
				{Path: "/p/\x1b[2K\rok", Kind: Created, After: file(1)},
				{Path: "/p/a\u202etxt.exe", Kind: Created, After: file(1)},
				{Path: "/p/my file", Kind: Created, After: symlink("\x1b]8;;http://evil/\x07x")},
				{Path: "/p/\nnew\x1b", Kind: Deleted, Before: file(1)},
			},
			want: `4 changes: 3 created, 1 deleted
/p/
  deleted  $'\nnew\x1b'  1 B
  created  $'\x1b[2K\rok'  1 B
  created  $'a\u202etxt.exe'  1 B
  created  'my file'  symlink → $'\x1b]8;;http://evil/\x07x'
`,
		},
		{
			name: "home shown as tilde, hostile directory quoted",
			changes: []Change{
				{Path: "/home/u/a b/x", Kind: Created, After: file(1)},
				{Path: "/home/u/y", Kind: Created, After: file(1)},
				{Path: "/home/\x1bu/z", Kind: Created, After: file(1)},
			},
			opts: SummaryOptions{Home: "/home/u/"},
			want: `3 changes: 3 created
$'/home/\x1bu'/
  created  z  1 B
~/
  created  y  1 B
~/'a b'/
  created  x  1 B
`,
		},
		{
			name: "bounded lines",
			changes: func() []Change {
				var cs []Change
				for i := 0; i < 100; i++ {
					cs = append(cs, Change{Path: fmt.Sprintf("/d%d/f", i), Kind: Modified, Before: file(1), After: file(2)})
				}
				return cs
			}(),
			opts: SummaryOptions{MaxLines: 5},
			want: `100 changes: 100 modified
/d0/
  modified f  1 B → 2 B
/d1/
  modified f  1 B → 2 B
... and 98 more changes
`,
		},
		{
			name: "width cuts long names in the middle",
			changes: []Change{
				{Path: "/p/" + strings.Repeat("x", 200) + ".tar.gz", Kind: Created, After: file(5)},
				{Path: "/p/short", Kind: Created, After: file(5)},
			},
			opts: SummaryOptions{Width: 40},
			want: `2 changes: 2 created
/p/
  created  short  5 B
  created  xxxxxxxxxxxx…xxxx.tar.gz  5 B
`,
		},
		{
			name: "10,000-character hostile name",
			changes: []Change{
				{Path: "/p/" + strings.Repeat("\x1b[2K", 2500), Kind: Created, After: file(1)},
			},
			opts: SummaryOptions{Width: 50},
			want: `1 change: 1 created
/p/
  created  $'\x1b[2K\x1b[2K\…K\x1b[2K\x1b[2K'  1 B
`,
		},
		{
			name: "narrow width cuts the line end",
			changes: []Change{
				{Path: "/p/file-with-long-name.txt", Kind: Modified, Before: file(5), After: file(5000), Meta: []string{"mode"}},
			},
			opts: SummaryOptions{Width: 30},
			want: `1 change: 1 modified
/p/
  modified file-with-long-nam…
`,
		},
		{
			name: "unsorted input and paths sharing a prefix",
			changes: []Change{
				{Path: "/p/b", Kind: Created, After: file(1)},
				{Path: "/p/a.d/x", Kind: Created, After: file(1)},
				{Path: "/p/a", Kind: Created, After: dir()},
				{Path: "/p/a/x", Kind: Created, After: file(1)},
			},
			opts: SummaryOptions{CollapseAt: 1},
			want: `4 changes: 4 created
/p/
  created  a/  with 1 file, 1 B
  created  b  1 B
/p/a.d/
  created  x  1 B
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			cs := &ChangeSet{Changes: tt.changes}
			before := fmt.Sprint(cs.Changes)
			if err := WriteSummary(&b, cs, tt.opts); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, b.String()); diff != "" {
				t.Errorf("summary mismatch (-want +got):\n%s", diff)
			}
			for _, line := range strings.Split(b.String(), "\n") {
				assertSafe(t, line, false)
				if tt.opts.Width > 0 && displayWidth(line) > tt.opts.Width {
					t.Errorf("line %q is wider than %d", line, tt.opts.Width)
				}
			}
			if fmt.Sprint(cs.Changes) != before {
				t.Errorf("WriteSummary modified the change set")
			}
		})
	}
}

func TestWriteSummaryBounded(t *testing.T) {
	cs := manyChanges(100000)
	for _, max := range []int{1, 10, 40} {
		var b strings.Builder
		if err := WriteSummary(&b, cs, SummaryOptions{MaxLines: max, Width: 80}); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		if len(lines) > max+2 {
			t.Errorf("MaxLines %d: got %d lines", max, len(lines))
		}
		if !strings.HasPrefix(lines[len(lines)-1], "... and ") {
			t.Errorf("MaxLines %d: last line %q does not count the rest", max, lines[len(lines)-1])
		}
	}
}

// manyChanges returns n changes of mixed kinds in many directories.
func manyChanges(n int) *ChangeSet {
	cs := &ChangeSet{Changes: make([]Change, 0, n)}
	for i := 0; len(cs.Changes) < n; i++ {
		p := fmt.Sprintf("/home/u/proj/pkg%03d/sub%02d/file%06d.go", i%997, i%13, i)
		switch i % 4 {
		case 0:
			cs.Changes = append(cs.Changes, Change{Path: p, Kind: Created, After: file(int64(i))})
		case 1:
			cs.Changes = append(cs.Changes, Change{Path: p, Kind: Modified, Before: file(1), After: file(2)})
		case 2:
			cs.Changes = append(cs.Changes, Change{Path: p, Kind: Deleted, Before: file(3)})
		default:
			cs.Changes = append(cs.Changes, Change{Path: p, Kind: MetaChanged, Before: file(3), After: &Object{Type: TypeFile, Mode: 0o600}})
		}
	}
	cs.Sort()
	return cs
}

func TestHumanBytes(t *testing.T) {
	tests := []struct {
		n    int64
		want string
	}{
		{0, "0 B"}, {999, "999 B"}, {1000, "1.0 kB"}, {1234, "1.2 kB"}, {88_000_000, "88 MB"},
		{999_999, "1.0 MB"}, {5_500_000_000, "5.5 GB"}, {-1, "? B"},
	}
	for _, tt := range tests {
		if got := humanBytes(tt.n); got != tt.want {
			t.Errorf("humanBytes(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 2341: "2,341", 1234567: "1,234,567", -1234: "-1,234"} {
		if got := commas(n); got != want {
			t.Errorf("commas(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		s          string
		w          int
		end, middl string
	}{
		{"hello", 10, "hello", "hello"},
		{"hello world", 6, "hello…", "hel…ld"},
		{"日本語のファイル", 7, "日本語…", "日本…ル"},
		{"abc", 0, "abc", "abc"},
	}
	for _, tt := range tests {
		if got := truncateEnd(tt.s, tt.w); got != tt.end {
			t.Errorf("truncateEnd(%q, %d) = %q, want %q", tt.s, tt.w, got, tt.end)
		}
		if got := truncateMiddle(tt.s, tt.w); got != tt.middl {
			t.Errorf("truncateMiddle(%q, %d) = %q, want %q", tt.s, tt.w, got, tt.middl)
		}
	}
}

func ExampleWriteSummary() {
	cs := &ChangeSet{Changes: []Change{
		{Path: "/home/ann/invoices/2025", Kind: Created, After: &Object{Type: TypeDir, Mode: 0o755}},
		{Path: "/home/ann/invoices/2025/jan.pdf", Kind: Created, After: &Object{Type: TypeFile, Size: 48_213, Mode: 0o644}},
		{Path: "/home/ann/jan.pdf", Kind: Deleted, Before: &Object{Type: TypeFile, Size: 48_213, Mode: 0o644}},
		{Path: "/home/ann/run.sh", Kind: MetaChanged, Before: &Object{Type: TypeFile, Mode: 0o644}, After: &Object{Type: TypeFile, Mode: 0o755}, Meta: []string{"mode"}},
	}}
	WriteSummary(os.Stdout, cs, SummaryOptions{Home: "/home/ann", Width: 80})
	// Output:
	// 4 changes: 2 created, 1 deleted, 1 metadata changed
	// ~/
	//   deleted  jan.pdf  48 kB
	//   changed  run.sh  mode rw-r--r-- → rwxr-xr-x
	// ~/invoices/
	//   created  2025/  directory
	// ~/invoices/2025/
	//   created  jan.pdf  48 kB
}
