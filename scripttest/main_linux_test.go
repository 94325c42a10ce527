package scripttest

import (
	"os"
	"testing"

	"github.com/nash-shell/nash/sandbox"
)

// TestMain lets the test binary act as the sandbox init (the sandbox
// re-executes /proc/self/exe).
func TestMain(m *testing.M) {
	if sandbox.IsChild() {
		sandbox.ChildMain()
	}
	os.Exit(m.Run())
}
