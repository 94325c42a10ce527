package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTmuxTestAndExample: at the review, t shows how the script fares in
// each starting state; g takes an example, which the script fails, with
// the difference shown; r sends that example to the model (the fake model
// records it) and the revision passes it when it runs again; the commit
// keeps it, and :export writes a test of it that passes when run. Nothing
// before the commit touches the files.
func TestTmuxTestAndExample(t *testing.T) {
	sloppy := `{"script": "for f in $(ls *.jpeg); do mv $f ${f%.jpeg}.jpg; done", "explanation": "Renames the photos."}`
	careful := `{"script": "shopt -s nullglob\nfor f in *.jpeg; do mv -- \"$f\" \"${f%.jpeg}.jpg\"; done", "explanation": "Renames the photos, names with spaces too."}`
	tn := startNash(t, sloppy+"\n---\n"+careful)
	for _, name := range []string{"a.jpeg", "b.jpeg"} {
		if err := os.WriteFile(filepath.Join(tn.dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tn.typeLine("rename my jpeg photos to jpg")
	tn.waitFor(`review: enter run · e edit · r revise · x explain · t test · g example · a abort`)

	tn.send("t")
	tn.waitFor(`tested \d+ starting states in [0-9.]+ s: \d+ fail`)
	s := tn.waitFor(`review: enter run`)
	for _, want := range []string{
		"FAIL    a name with a space matches *.jpeg  (name-space *.jpeg)",
		"leaves 'my photo.jpeg' as it is, where it moves a.jpeg to a.jpg",
		"FAIL    no file matches *.jpeg  (glob-none *.jpeg)",
		"pass    today's files  (today)",
		"r revises the script with what failed",
	} {
		if !strings.Contains(s, want) {
			tn.fatalf("after t the screen lacks %q", want)
		}
	}

	tn.send("g")
	tn.waitFor(`example: .*\n.*files before => files after`)
	tn.typeLine(`a.jpeg 'my photo.jpeg' => a.jpg 'my photo.jpg'`)
	tn.waitFor(`FAIL    example 1: a\.jpeg 'my photo\.jpeg' => a\.jpg 'my photo\.jpg'`)
	s = tn.waitFor(`review: enter run`)
	for _, want := range []string{"'my photo.jpg' is missing (expected a file of 0 bytes)", "it left: a.jpg 'my photo.jpeg'"} {
		if !strings.Contains(s, want) {
			tn.fatalf("the example's result lacks %q", want)
		}
	}

	tn.send("r")
	tn.waitFor(`1 failing example and \d+ failing starting states go to the model with what you type`)
	tn.waitFor(`what should change\? make it pass what failed`)
	tn.send("Enter")
	tn.waitFor(`pass    example 1 \(new script\): a\.jpeg 'my photo\.jpeg' => a\.jpg 'my photo\.jpg'`)
	tn.waitFor(`review: enter run`)
	for _, name := range []string{"a.jpeg", "b.jpeg"} {
		if _, err := os.Stat(filepath.Join(tn.dir, name)); err != nil {
			tn.fatalf("before the run: %v", err)
		}
	}
	log, _ := os.ReadFile(filepath.Join(filepath.Dir(tn.dir), "requests.log"))
	revision := string(log[strings.LastIndex(string(log), "=== request"):])
	for _, want := range []string{
		"make it pass what failed",
		"-- before/my photo.jpeg --", "-- after/my photo.jpg --",
		"'my photo.jpg' is missing (expected a file of 0 bytes)",
		"a name with a space matches *.jpeg: leaves 'my photo.jpeg' as it is",
	} {
		if !strings.Contains(revision, want) {
			tn.fatalf("the revision request lacks %q:\n%s", want, revision)
		}
	}

	tn.send("Enter")
	tn.waitFor(`changes: c commit`)
	tn.send("c")
	tn.waitFor(`committed as transaction \d+`)
	for _, name := range []string{"a.jpg", "b.jpg"} {
		if _, err := os.Stat(filepath.Join(tn.dir, name)); err != nil {
			tn.fatalf("after the commit: %v", err)
		}
	}

	tn.typeLine(":export photos.sh")
	tn.waitFor(`wrote 1 example to .*photos\.sh\.test; run it to check`)
	out, err := exec.Command("bash", filepath.Join(tn.dir, "photos.sh.test")).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "pass: example 1.1 (a.jpeg 'my photo.jpeg' => a.jpg 'my photo.jpg')") {
		tn.fatalf("the exported test: %v\n%s", err, out)
	}
}
