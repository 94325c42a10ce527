package sandbox

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nash-shell/nash/internal/sandboxinit"
)

const sampleMountinfo = `22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw
23 22 0:5 / /dev rw,nosuid - devtmpfs devtmpfs rw
24 23 0:20 / /dev/shm rw,nosuid,nodev - tmpfs tmpfs rw
25 23 0:21 / /dev/pts rw,nosuid,noexec - devpts devpts rw
26 22 0:22 / /proc rw,nosuid,nodev,noexec - proc proc rw
27 22 0:23 / /sys rw,nosuid,nodev,noexec - sysfs sysfs rw
28 27 0:24 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw
29 22 0:25 / /mnt/data\040disk rw - xfs /dev/vdb rw
30 22 0:26 / /mnt/ro ro - ext4 /dev/vdc ro
31 22 0:27 / /home rw - btrfs /dev/vdd rw
32 22 0:28 / /home rw - ext4 /dev/vde rw
`

func TestParseMountinfo(t *testing.T) {
	ms, err := parseMountinfo(strings.NewReader(sampleMountinfo))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]mountEntry{}
	for _, m := range ms {
		got[m.Point] = m
	}
	tests := []struct {
		point string
		want  mountEntry
	}{
		{"/", mountEntry{Point: "/", FSType: "ext4"}},
		{"/mnt/data disk", mountEntry{Point: "/mnt/data disk", FSType: "xfs"}},
		{"/mnt/ro", mountEntry{Point: "/mnt/ro", FSType: "ext4", ReadOnly: true}},
		{"/home", mountEntry{Point: "/home", FSType: "ext4"}}, // the later mount hides the earlier
		{"/sys/fs/cgroup", mountEntry{Point: "/sys/fs/cgroup", FSType: "cgroup2"}},
	}
	for _, tt := range tests {
		if got[tt.point] != tt.want {
			t.Errorf("%s: got %+v, want %+v", tt.point, got[tt.point], tt.want)
		}
	}
	if len(ms) != 10 {
		t.Errorf("%d mounts, want 10 (one /home)", len(ms))
	}
	if _, err := parseMountinfo(strings.NewReader("garbage line\n")); err == nil {
		t.Error("a malformed line parsed without error")
	}
}

func FuzzParseMountinfo(f *testing.F) {
	f.Add(sampleMountinfo)
	f.Add("1 0 0:1 / / rw - ext4 x rw\n")
	f.Add(`1 0 0:1 / /a\134b\\ rw - - - -`)
	f.Fuzz(func(t *testing.T, s string) {
		ms, err := parseMountinfo(strings.NewReader(s))
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, m := range ms {
			if seen[m.Point] {
				t.Fatalf("mount point %q listed twice", m.Point)
			}
			seen[m.Point] = true
		}
	})
}

// fakeHost is a host tree for the planner: directories, symlinks and files.
type fakeHost map[string]string // path -> "dir", "file" or "link:TARGET"

func (h fakeHost) ReadDir(dir string) ([]fs.DirEntry, error) {
	var out []fs.DirEntry
	for p, kind := range h {
		if p != "/" && path.Dir(p) == dir {
			out = append(out, fakeEntry{name: path.Base(p), kind: kind})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out, nil
}

func (h fakeHost) Readlink(p string) (string, error) {
	if t, ok := strings.CutPrefix(h[p], "link:"); ok {
		return t, nil
	}
	return "", fs.ErrInvalid
}

func (h fakeHost) Lstat(p string) (fs.FileInfo, error) {
	kind, ok := h[p]
	if !ok {
		return nil, fs.ErrNotExist
	}
	return fakeEntry{name: path.Base(p), kind: kind}, nil
}

type fakeEntry struct{ name, kind string }

func (e fakeEntry) Name() string { return e.name }
func (e fakeEntry) IsDir() bool  { return e.kind == "dir" }
func (e fakeEntry) Type() fs.FileMode {
	switch {
	case e.kind == "dir":
		return fs.ModeDir
	case strings.HasPrefix(e.kind, "link:"):
		return fs.ModeSymlink
	}
	return 0
}
func (e fakeEntry) Info() (fs.FileInfo, error) { return e, nil }
func (e fakeEntry) Size() int64                { return 0 }
func (e fakeEntry) Mode() fs.FileMode          { return e.Type() | 0o755 }
func (e fakeEntry) ModTime() time.Time         { return time.Time{} }
func (e fakeEntry) Sys() any                   { return nil }

func TestBuildPlan(t *testing.T) {
	host := fakeHost{
		"/": "dir", "/bin": "link:usr/bin", "/usr": "dir", "/etc": "dir", "/home": "dir", "/tmp": "dir",
		"/proc": "dir", "/sys": "dir", "/dev": "dir", "/dev/shm": "dir", "/dev/pts": "dir",
		"/mnt": "dir", "/mnt/data disk": "dir", "/mnt/ro": "dir", "/mnt/plain": "dir", "/mnt/note.txt": "file",
		"/.dockerenv": "file",
	}
	ms, err := parseMountinfo(strings.NewReader(sampleMountinfo))
	if err != nil {
		t.Fatal(err)
	}
	p, err := buildPlan(ms, host)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, op := range p.Ops {
		s := fmt.Sprintf("%s %s", op.Kind, op.Path)
		if op.Kind == sandboxinit.OpSymlink {
			s += " -> " + op.Target
		}
		got = append(got, s)
	}
	want := []string{
		"dir /",
		"bind-ro /.dockerenv",     // a file directly in a sealed dir
		"symlink /bin -> usr/bin", // recreated, not followed
		"dev /dev",                // nodes, devpts, /dev/shm overlay
		"overlay /etc",            //
		"overlay /home",           // its own mount: its own overlay
		"dir /mnt",                // has mounts below: sealed skeleton
		"overlay /mnt/data disk",  // a mount with no mounts below
		"bind-ro /mnt/note.txt",   //
		"overlay /mnt/plain",      // a plain dir beside mounts
		"bind-ro /mnt/ro",         // read-only mounts stay read-only
		"proc /proc",              //
		"sys /sys",                //
		"overlay /tmp",            //
		"overlay /usr",            //
	}
	if !slices.Equal(got, want) {
		t.Errorf("plan:\n got %q\nwant %q", got, want)
	}
	var points []string
	for _, l := range p.Layers {
		points = append(points, l.Point)
	}
	wantPoints := []string{"/dev/shm", "/etc", "/home", "/mnt/data disk", "/mnt/plain", "/tmp", "/usr"}
	if !slices.Equal(points, wantPoints) {
		t.Errorf("layers %q, want %q", points, wantPoints)
	}
	for _, ro := range []string{"/ (new entries)", "/mnt/ (new entries)", "/mnt/ro", "/mnt/note.txt", "/.dockerenv"} {
		if !slices.Contains(p.ReadOnly, ro) {
			t.Errorf("ReadOnly %q lacks %q", p.ReadOnly, ro)
		}
	}
}

func TestUnder(t *testing.T) {
	tests := []struct {
		p, root string
		want    bool
	}{
		{"/a/b", "/a", true}, {"/a", "/a", true}, {"/ab", "/a", false}, {"/a", "/", true}, {"/", "/", true}, {"/a", "/a/b", false},
	}
	for _, tt := range tests {
		if got := under(tt.p, tt.root); got != tt.want {
			t.Errorf("under(%q, %q) = %v, want %v", tt.p, tt.root, got, tt.want)
		}
	}
}
