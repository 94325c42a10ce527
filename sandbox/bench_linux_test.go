package sandbox

import (
	"context"
	"os/exec"
	"testing"
)

// BenchmarkCommit1GiB times only the commit of a change to a 1 GiB file
// (the run, where overlayfs copies the file up, is not timed), next to
// copying the file once, which is what a commit by copy would cost.
func BenchmarkCommit1GiB(b *testing.B) {
	b.Run("commit", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			e := newEnv(b)
			e.sh("head -c 1073741824 /dev/zero > big")
			p := e.run("echo tail >> big")
			e.sb.waitTorndown(p.ID)
			b.StartTimer()
			if _, err := e.sb.Commit(context.Background(), p.ID, CommitOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cp", func(b *testing.B) {
		dir := b.TempDir()
		if out, err := exec.Command("sh", "-c", "head -c 1073741824 /dev/zero > "+dir+"/big").CombinedOutput(); err != nil {
			b.Fatalf("%v %s", err, out)
		}
		for b.Loop() {
			if out, err := exec.Command("cp", dir+"/big", dir+"/copy").CombinedOutput(); err != nil {
				b.Fatalf("%v %s", err, out)
			}
		}
	})
}
