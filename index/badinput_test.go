package index

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// TestBadInput indexes a tree of hostile files. Each is indexed or skipped
// with a reason; nothing crashes and the good file stays searchable.
func TestBadInput(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"good.txt":       "a perfectly ordinary grocery list\n",
		"unreadable.txt": "secret grocery plans\n",
		"doomed.txt":     "deleted before it is read\n",
		"corrupt.pdf":    "%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >>\ntrailer garbage\n%%EOF\n",
		"corrupt.docx":   "PK\x03\x04 not really a zip",
		"noxml.odt":      string(makeZip(map[string]string{"mimetype": "x"})),
	})
	binary := append([]byte("looks like text at first"), make([]byte, 4096)...)
	if err := os.WriteFile(filepath.Join(dir, "binary.txt"), binary, 0o644); err != nil {
		t.Fatal(err)
	}
	// A 2 GiB sparse file: over the cap, never read.
	big, err := os.Create(filepath.Join(dir, "huge.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := big.Truncate(2 << 30); err != nil {
		t.Fatal(err)
	}
	big.Close()
	// Symlinks: a loop, a dangling link, a link to a directory (a cycle).
	for link, target := range map[string]string{"loop-a": "loop-b", "loop-b": "loop-a", "dangling.txt": "nowhere", "up": "."} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.txt"), 0o644); err != nil {
		t.Fatal(err)
	}
	// chmod 000 blocks reads only for unprivileged users; as root (CI) the
	// file is readable and must be indexed. Both are checked honestly below.
	unreadable := filepath.Join(dir, "unreadable.txt")
	if err := os.Chmod(unreadable, 0); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(unreadable, 0o644)
	_, probe := os.ReadFile(unreadable)
	blocked := probe != nil

	// The reader deletes doomed.txt just before reading it, as a file
	// removed between the walk and the read.
	read := func(path string, limit int64) ([]byte, error) {
		if filepath.Base(path) == "doomed.txt" {
			if err := os.Remove(path); err != nil {
				return nil, err
			}
		}
		return readFileLimit(path, limit)
	}
	ix := openTest(t, ReadFileFunc(read), MaxFileSize(1<<20))
	st, err := ix.Add(ctx, dir)
	if err != nil {
		t.Fatalf("Add: %v", err)
	}
	reasons := map[string]string{}
	causes := map[string]error{}
	for _, s := range st.Skipped {
		reasons[filepath.Base(s.Path)] = s.Reason
		causes[filepath.Base(s.Path)] = s.Err
	}
	for name, want := range map[string]error{
		"binary.txt": ErrBinary, "huge.txt": ErrTooLarge, "corrupt.pdf": ErrCorrupt,
		"corrupt.docx": ErrCorrupt, "fifo.txt": ErrNotRegular, "loop-a": syscall.ELOOP,
	} {
		if !errors.Is(causes[name], want) {
			t.Errorf("%s: cause %v, want errors.Is %v", name, causes[name], want)
		}
	}
	want := map[string]string{
		"binary.txt":   "binary",
		"huge.txt":     "size cap",
		"corrupt.pdf":  "corrupt",
		"corrupt.docx": "corrupt",
		"noxml.odt":    "corrupt",
		"loop-a":       "symlink",
		"loop-b":       "symlink",
		"dangling.txt": "symlink",
		"up":           "not followed",
		"fifo.txt":     "not a regular file",
		"doomed.txt":   "vanished",
	}
	if blocked {
		want["unreadable.txt"] = "permission denied"
	}
	for name, substr := range want {
		if got, ok := reasons[name]; !ok || !strings.Contains(got, substr) {
			t.Errorf("%s: skip reason %q, want one containing %q", name, got, substr)
		}
	}
	for name := range reasons {
		if _, ok := want[name]; !ok {
			t.Errorf("%s skipped (%s), want it indexed", name, reasons[name])
		}
	}
	res, err := ix.Search(ctx, "grocery", SearchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantHits := []string{"good.txt"}
	if !blocked {
		wantHits = append(wantHits, "unreadable.txt") // root reads it: indexed
	}
	if got := names(res.Hits); len(got) != len(wantHits) {
		t.Errorf("grocery finds %v, want %v (chmod 000 blocks reads: %v)", got, wantHits, blocked)
	}
	t.Logf("chmod 000 blocks reads for this user: %v", blocked)

	// Unreadable for certain: a reader that fails with EACCES, as for an
	// unprivileged user.
	denied := func(path string, limit int64) ([]byte, error) {
		if filepath.Base(path) == "good.txt" {
			return nil, &fs.PathError{Op: "open", Path: path, Err: syscall.EACCES}
		}
		return readFileLimit(path, limit)
	}
	ix2 := openTest(t, ReadFileFunc(denied))
	st, err = ix2.Add(ctx, filepath.Join(dir, "good.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Skipped) != 1 || !strings.Contains(st.Skipped[0].Reason, "permission denied") {
		t.Errorf("EACCES: skipped %v, want good.txt with permission denied", st.Skipped)
	}
	// Skipped files are remembered and reported by Status.
	status, err := ix.Status()
	if err != nil {
		t.Fatal(err)
	}
	// Links that cannot be followed and the vanished file are not on record.
	if len(status.Skipped) != len(want)-5 {
		t.Errorf("status lists %d skipped files: %v", len(status.Skipped), status.Skipped)
	}
}

func TestExtract(t *testing.T) {
	tests := []struct {
		name      string
		data      []byte
		format    Format
		title     string
		contains  []string
		missing   []string
		wantErrIs error
	}{
		{"a.txt", []byte("plain words\n"), FormatText, "", []string{"plain words"}, nil, nil},
		{"latin1.txt", []byte("Le caf\xe9 est tr\xe8s bon, merci beaucoup.\n"), FormatText, "", []string{"merci"}, nil, nil},
		{"a.md", []byte("intro\n# Title here\nbody"), FormatMarkdown, "Title here", []string{"body"}, nil, nil},
		{"a.go", []byte("package a\n"), FormatCode, "", []string{"package a"}, nil, nil},
		{"a.html", []byte("<title>T &amp; U</title><p>x&lt;y</p><!-- hidden --><script>code()</script><style>.a{}</style>z"),
			FormatHTML, "T & U", []string{"x<y", "z"}, []string{"hidden", "code()", ".a{}"}, nil},
		{"a.html", []byte("<p>unclosed <b"), FormatHTML, "", []string{"unclosed"}, nil, nil},
		{"a.docx", makeDOCX("First para", "Second para"), FormatDOCX, "First para", []string{"First para\nSecond para"}, nil, nil},
		{"a.odt", makeODT("Eins", "Zwei"), FormatODT, "Eins", []string{"Eins\nZwei"}, nil, nil},
		{"a.pdf", makePDF("Hello PDF world"), FormatPDF, "", []string{"Hello PDF world"}, nil, nil},
		// TeX sets words apart with TJ gaps and lines with Td moves, not
		// with space characters; small TJ numbers are kerning.
		{"tex.pdf", makePDFContent("BT /F1 10 Tf 72 720 Td [(Measuremen)27(ts)-333(of)-333(glacier)]TJ 0 -12 Td [(retreat)-333(in)]TJ 30 0 Td (the)Tj 1 0 0 1 72 600 Tm (Alps)Tj ET\n"),
			FormatPDF, "", []string{"Measurements of glacier\nretreat in the\nAlps"}, []string{"Measuremen ts", "glacierretreat"}, nil},
		{"a.pdf", []byte("%PDF-1.7 nonsense"), "", "", nil, nil, ErrCorrupt},
		{"a.pdf", makePDF("x")[:200], "", "", nil, nil, ErrCorrupt},
		{"a.docx", []byte("not a zip"), "", "", nil, nil, ErrCorrupt},
		{"a.png", []byte("text in a png"), "", "", nil, nil, ErrBinary},
		{"a.txt", []byte("nul\x00byte"), "", "", nil, nil, ErrBinary},
		{"noext", []byte{0xff, 0xfe, 0xfd, 0x00, 0x01}, "", "", nil, nil, ErrBinary},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := Extract(tt.name, tt.data)
			if tt.wantErrIs != nil {
				if !errors.Is(err, tt.wantErrIs) {
					t.Fatalf("Extract error = %v, want %v", err, tt.wantErrIs)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if doc.Format != tt.format || doc.Title != tt.title {
				t.Errorf("format %q title %q, want %q %q", doc.Format, doc.Title, tt.format, tt.title)
			}
			for _, s := range tt.contains {
				if !strings.Contains(doc.Text, s) {
					t.Errorf("text %q lacks %q", doc.Text, s)
				}
			}
			for _, s := range tt.missing {
				if strings.Contains(doc.Text, s) {
					t.Errorf("text %q has %q", doc.Text, s)
				}
			}
		})
	}
}

func TestSplitChunks(t *testing.T) {
	tests := []struct {
		text          string
		size, overlap int
		want          []string
		lines         []int
	}{
		{"", 3, 1, nil, nil},
		{"  \n ", 3, 1, nil, nil},
		{"a b", 3, 1, []string{"a b"}, []int{1}},
		{"a b c d e", 3, 1, []string{"a b c", "c d e"}, []int{1, 1}},
		{"a\nb\nc\nd\ne\nf", 3, 1, []string{"a\nb\nc", "c\nd\ne", "e\nf"}, []int{1, 3, 5}},
		{"a b c d", 2, 5, []string{"a b", "b c", "c d"}, []int{1, 1, 1}}, // bad overlap: size/4 = 0... see below
	}
	for _, tt := range tests {
		got := SplitChunks(tt.text, tt.size, tt.overlap)
		var texts []string
		var lines []int
		for i, c := range got {
			if c.Seq != i {
				t.Errorf("chunk %d has Seq %d", i, c.Seq)
			}
			texts = append(texts, c.Text)
			lines = append(lines, c.Line)
		}
		if tt.size == 2 && tt.overlap == 5 {
			// An overlap not below size falls back to size/4 (0 words here).
			tt.want, tt.lines = []string{"a b", "c d"}, []int{1, 1}
		}
		if strings.Join(texts, "|") != strings.Join(tt.want, "|") || len(lines) != len(tt.lines) {
			t.Errorf("SplitChunks(%q, %d, %d) = %q, want %q", tt.text, tt.size, tt.overlap, texts, tt.want)
			continue
		}
		for i := range lines {
			if lines[i] != tt.lines[i] {
				t.Errorf("SplitChunks(%q) lines = %v, want %v", tt.text, lines, tt.lines)
				break
			}
		}
	}
}

func TestIgnoreRules(t *testing.T) {
	rules := parseIgnore("/r", []byte("# comment\n*.log\n!keep.log\nbuild/\n/top.txt\ndocs/**/draft.md\n[ab].c\n\\#hash\n"))
	tests := []struct {
		path string
		dir  bool
		want bool
	}{
		{"/r/x.log", false, true},
		{"/r/sub/x.log", false, true},
		{"/r/keep.log", false, false},
		{"/r/build", true, true},
		{"/r/build", false, false}, // dir-only pattern
		{"/r/top.txt", false, true},
		{"/r/sub/top.txt", false, false}, // anchored
		{"/r/docs/a/b/draft.md", false, true},
		{"/r/docs/draft.md", false, true},
		{"/r/a.c", false, true},
		{"/r/c.c", false, false},
		{"/r/#hash", false, true},
		{"/other/x.txt", false, false},
	}
	for _, tt := range tests {
		if got := rules.ignored(tt.path, tt.dir); got != tt.want {
			t.Errorf("ignored(%s, dir=%v) = %v, want %v", tt.path, tt.dir, got, tt.want)
		}
	}
}

// TestHeadings: titles and section headings of Markdown, HTML and plain
// text.
func TestHeadings(t *testing.T) {
	tests := []struct {
		name, text string
		title      string
		heads      []string
	}{
		{"a.md", "intro\n# Title here\nbody\n## Usage\n```\n# not a heading\n```\nSetext\n======\n", "Title here", []string{"Title here", "Usage", "Setext"}},
		{"b.md", "APT\n===\n\napt is a package manager.\n", "APT", []string{"APT"}},
		{"man.txt", "TAR(1)    GNU TAR Manual    TAR(1)\n\nNAME\n       tar - an archiving utility\n\nSYNOPSIS\n       tar -c\n", "TAR(1) GNU TAR Manual TAR(1)", []string{"NAME", "SYNOPSIS"}},
		{"readme.txt", "This is the README.\n\nSome text. NOT A HEADING, sentence.\nUsage Notes\n-----------\nmore\n", "This is the README.", []string{"Usage Notes"}},
		{"one.txt", "plain words\n", "", nil},
		{"a.html", "<title>T</title><h1>Intro</h1><p>x</p><h2>Deeper <b>part</b></h2>", "T", []string{"Intro", "Deeper part"}},
	}
	for _, tt := range tests {
		d, err := Extract(tt.name, []byte(tt.text))
		if err != nil {
			t.Fatal(err)
		}
		if d.Title != tt.title || !slices.Equal(d.Headings, tt.heads) {
			t.Errorf("Extract(%s): title %q headings %q, want %q %q", tt.name, d.Title, d.Headings, tt.title, tt.heads)
		}
	}
}
