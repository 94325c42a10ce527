package scripttest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nash-shell/nash/sandbox"
)

func TestProf(t *testing.T) {
	for _, s := range benchScripts {
		work := filepath.Join(t.TempDir(), "work")
		for _, f := range s.files {
			p := filepath.Join(work, f)
			if f[len(f)-1] == '/' { os.MkdirAll(p, 0o755); continue }
			os.MkdirAll(filepath.Dir(p), 0o755); os.WriteFile(p, []byte("x\n"), 0o644)
		}
		env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + filepath.Dir(work)}
		for _, e := range s.env { env = append(env, replaceWork(e, work)) }
		for _, par := range []int{1, 2} {
			tr := New(Dir(work), Env(env), Parallel(par), Sandbox(sandbox.StateDir(t.TempDir()), sandbox.Executable("/tmp/st/nash-sandbox")))
			for i := 0; i < 2; i++ {
				rep, err := tr.Test(context.Background(), s.script)
				if err != nil { t.Fatal(err) }
				fmt.Printf("%s par=%d total %v\n", s.name, par, rep.Elapsed.Round(time.Millisecond))
				if i == 1 {
					for _, v := range rep.Variants { fmt.Printf("   %-40s %v\n", v.Name, v.Elapsed.Round(time.Millisecond)) }
				}
			}
		}
	}
}
