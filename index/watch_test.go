package index

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

// eventually polls cond every 20 ms until it holds or the deadline passes.
// The deadline is generous: this checks behaviour, not speed; the time
// taken is logged for information.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	start := time.Now()
	// A guard against a hang, not a latency claim (that is the
	// benchmarks' job): under the race detector on a loaded 2-core
	// machine a rescan of 12,000 files takes tens of seconds.
	deadline := start.Add(2 * time.Minute)
	var last string
	for time.Now().Before(deadline) {
		ok, state := cond()
		if ok {
			t.Logf("%s: seen after %v", what, time.Since(start).Round(time.Millisecond))
			return
		}
		last = state
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s: not seen before the deadline; last state: %s", what, last)
}

// finds reports whether query finds exactly the wanted base names.
func finds(t *testing.T, ix *Index, query string, want ...string) func() (bool, string) {
	return func() (bool, string) {
		res, err := ix.Search(context.Background(), query, SearchOptions{N: 1000})
		if err != nil {
			t.Fatal(err)
		}
		got := names(res.Hits)
		slices.Sort(got)
		w := slices.Clone(want)
		slices.Sort(w)
		return slices.Equal(got, w), fmt.Sprint(got)
	}
}

func TestWatcher(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": "alpha\n", "sub/b.txt": "bravo\n", ".gitignore": "*.tmp\n"})
	ix := openTest(t)
	if _, err := ix.Add(ctx, dir); err != nil {
		t.Fatal(err)
	}
	w, err := ix.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()

	writeFiles(t, dir, map[string]string{"c.txt": "charlie zulu\n"})
	eventually(t, "create", finds(t, ix, "charlie", "c.txt"))

	writeFiles(t, dir, map[string]string{"c.txt": "delta zulu\n"})
	eventually(t, "modify", finds(t, ix, "delta", "c.txt"))
	eventually(t, "modify drops old words", finds(t, ix, "charlie"))

	if err := os.Rename(filepath.Join(dir, "c.txt"), filepath.Join(dir, "sub", "renamed.txt")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "rename", finds(t, ix, "delta", "renamed.txt"))

	if err := os.Remove(filepath.Join(dir, "sub", "renamed.txt")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "delete", finds(t, ix, "delta"))

	// A new directory, then a directory renamed: files below follow.
	writeFiles(t, dir, map[string]string{"new/deep/e.txt": "echo\n"})
	eventually(t, "new directory", finds(t, ix, "echo", "e.txt"))
	if err := os.Rename(filepath.Join(dir, "new"), filepath.Join(dir, "moved")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "renamed directory", func() (bool, string) {
		res, _ := ix.Search(ctx, "echo", SearchOptions{})
		if len(res.Hits) != 1 {
			return false, fmt.Sprint(names(res.Hits))
		}
		return res.Hits[0].Path == filepath.Join(dir, "moved", "deep", "e.txt"), res.Hits[0].Path
	})
	// Changes in the moved tree are still seen (its watches were renewed).
	writeFiles(t, dir, map[string]string{"moved/deep/f.txt": "foxtrot\n"})
	eventually(t, "file in renamed directory", finds(t, ix, "foxtrot", "f.txt"))

	// Ignored files stay out.
	writeFiles(t, dir, map[string]string{"x.tmp": "zulu\n"})
	time.Sleep(500 * time.Millisecond)
	if ok, got := finds(t, ix, "zulu")(); !ok {
		t.Errorf("ignored file indexed: %s", got)
	}
}

func TestWatcherRenameStorm(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	const n = 300
	files := map[string]string{}
	for i := range n {
		files["f"+strconv.Itoa(i)+".txt"] = "storm file\n"
	}
	writeFiles(t, dir, files)
	ix := openTest(t)
	if _, err := ix.Add(ctx, dir); err != nil {
		t.Fatal(err)
	}
	w, err := ix.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	// Each file is renamed three times in a row.
	for i := range n {
		p := filepath.Join(dir, "f"+strconv.Itoa(i)+".txt")
		for r := 1; r <= 3; r++ {
			q := filepath.Join(dir, fmt.Sprintf("f%d-r%d.txt", i, r))
			if err := os.Rename(p, q); err != nil {
				t.Fatal(err)
			}
			p = q
		}
	}
	want := make([]string, n)
	for i := range n {
		want[i] = fmt.Sprintf("f%d-r3.txt", i)
	}
	eventually(t, "rename storm", finds(t, ix, "storm", want...))
	st, err := ix.Status()
	if err != nil {
		t.Fatal(err)
	}
	if st.Files != n {
		t.Errorf("status counts %d files, want %d", st.Files, n)
	}
}

// TestWatcherOverflow blocks the watcher while more events than the kernel
// queue holds are made; the overflow must end in a rescan that finds every
// file.
func TestWatcherOverflow(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"seed.txt": "seed\n"})
	ix := openTest(t)
	if _, err := ix.Add(ctx, dir); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events")
	if err != nil {
		t.Fatalf("read inotify queue size: %v", err)
	}
	queue, err := strconv.Atoi(string(data[:len(data)-1]))
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	var once sync.Once
	var mu sync.Mutex
	var ops []string
	w, err := ix.Watch(ctx, OnWatchEvent(func(ev WatchEvent) {
		mu.Lock()
		ops = append(ops, ev.Op)
		mu.Unlock()
		once.Do(func() { <-release }) // hold the watcher after its first batch
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	writeFiles(t, dir, map[string]string{"first.txt": "first\n"})
	eventually(t, "first batch", finds(t, ix, "first", "first.txt"))
	// Each create makes at least two events (create, close-write): the
	// channel buffer (4096) and the kernel queue overflow.
	files := queue/2 + 4096
	for i := range files {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("o%d.txt", i)), []byte("overflow\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	close(release)
	eventually(t, "rescan after overflow", func() (bool, string) {
		res, err := ix.Search(ctx, "overflow", SearchOptions{N: files + 10})
		if err != nil {
			t.Fatal(err)
		}
		return len(res.Hits) == files, fmt.Sprintf("%d of %d files", len(res.Hits), files)
	})
	mu.Lock()
	defer mu.Unlock()
	if !slices.Contains(ops, "rescan") {
		t.Errorf("watcher ops %v, want a rescan", ops)
	}
}
