package effects

import (
	"slices"
	"testing"
)

func TestParseHostLook(t *testing.T) {
	for _, tt := range []struct {
		script string
		ok     bool
		run    string // what runs, when it differs
		looks  []string
	}{
		{"ps aux", true, "", []string{"ps"}},
		{"ps aux | grep node | head -5", true, "", []string{"ps"}},
		{"ss -ltnp", true, "", []string{"ss"}},
		{"lsof -i :8080", true, "lsof -n -i :8080", []string{"lsof"}},
		{"lsof -n -i :8080", true, "", []string{"lsof"}},
		{"netstat -tlnp 2>/dev/null | grep 8080", true, "", []string{"netstat"}},
		{"netstat -tlp", true, "netstat -n -tlp", []string{"netstat"}},
		{"free -h && uptime", true, "", []string{"free", "uptime"}},
		{"systemctl status nginx", true, "", []string{"systemctl"}},
		{"top -b -n 1 | head -20", true, "", []string{"top"}},
		{"pgrep -a python; pstree -p", true, "", []string{"pgrep", "pstree"}},
		{"ps aux | sort -k3 -nr | head", true, "", []string{"ps"}},

		{"grep x file", false, "", nil},               // looks at nothing of the host
		{"ps aux > procs.txt", false, "", nil},        // writes a file
		{"ps aux | sort -o out", false, "", nil},      // sort writes
		{"ps aux | uniq - out", false, "", nil},       // uniq writes
		{"ps aux | sh", false, "", nil},               // runs what it reads
		{"ps aux | awk '{print $2}'", false, "", nil}, // awk runs programs
		{"ps $(cat pids)", false, "", nil},            // command substitution
		{"X=1 ps", false, "", nil},                    // assignment
		{"ss -K dst 10.0.0.1", false, "", nil},        // kills sockets
		{"ss -tlnr", false, "", nil},                  // looks names up
		{"systemctl restart nginx", false, "", nil},   // acts
		{"systemctl status nginx -H host", false, "", nil},
		{"top", false, "", nil}, // full screen
		{"kill 1234", true, "", nil},
		{"pgrep -f server && pkill -f server", true, "", []string{"pgrep"}},
		{"kill -9 $(pgrep x)", false, "", nil},
		{"ps aux &", false, "", nil}, // background
		{"ps aux; rm -rf x", false, "", nil},
		{"./ps aux", false, "", nil},
		{"ps *", false, "", nil}, // a glob
		{"who am i", false, "", nil},
		{"for p in 1; do ps; done", false, "", nil},
		{"", false, "", nil},
		{"ps 'unterminated", false, "", nil},
	} {
		h, ok := ParseHostLook(tt.script)
		if ok != tt.ok {
			t.Errorf("ParseHostLook(%q) ok = %v, want %v", tt.script, ok, tt.ok)
			continue
		}
		if !ok {
			continue
		}
		want := tt.run
		if want == "" {
			want = tt.script
		}
		if h.Script != want || !slices.Equal(h.Looks, tt.looks) {
			t.Errorf("ParseHostLook(%q) = %q %v, want %q %v", tt.script, h.Script, h.Looks, want, tt.looks)
		}
	}
}

// FuzzParseHostLook: whatever the script, a host look's script parses, and
// differs from the original only by the -n it adds.
func FuzzParseHostLook(f *testing.F) {
	for _, s := range []string{"ps aux | grep x", "lsof -i :80; netstat -t", "ss -K", "ps > /dev/null 2>&1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, script string) {
		h, ok := ParseHostLook(script)
		if !ok {
			return
		}
		if len(h.Script) != len(script)+3*len(h.NoLookup) {
			t.Fatalf("ParseHostLook(%q).Script = %q: more than -n added", script, h.Script)
		}
		if _, ok := ParseHostLook(h.Script); !ok {
			t.Fatalf("ParseHostLook(%q).Script = %q is no host look", script, h.Script)
		}
	})
}
