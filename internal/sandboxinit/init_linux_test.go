package sandboxinit

import "testing"

func TestEscapeOpt(t *testing.T) {
	if got := escapeOpt(`/a,b:c\d`); got != `/a\,b\:c\\d` {
		t.Errorf("escapeOpt = %q", got)
	}
}
