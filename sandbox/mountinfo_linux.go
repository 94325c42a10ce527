package sandbox

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// mountEntry is one line of /proc/self/mountinfo, reduced to what the plan
// needs.
type mountEntry struct {
	Point    string // mount point
	FSType   string
	ReadOnly bool // the mount itself is read-only
}

// parseMountinfo reads /proc/PID/mountinfo. Later entries for the same mount
// point hide earlier ones, so only the last is kept.
func parseMountinfo(r io.Reader) ([]mountEntry, error) {
	var out []mountEntry
	index := map[string]int{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		sep := -1
		for i, x := range f {
			if x == "-" && i >= 6 {
				sep = i
				break
			}
		}
		if len(f) < 7 || sep < 0 || sep+1 >= len(f) {
			return nil, fmt.Errorf("parse mountinfo: malformed line %q", sc.Text())
		}
		e := mountEntry{Point: unescapeMount(f[4]), FSType: f[sep+1]}
		for _, o := range strings.Split(f[5], ",") {
			if o == "ro" {
				e.ReadOnly = true
			}
		}
		if i, ok := index[e.Point]; ok {
			out[i] = e
			continue
		}
		index[e.Point] = len(out)
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read mountinfo: %w", err)
	}
	return out, nil
}

// unescapeMount undoes the octal escapes (\040 for space, ...) of mountinfo.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && isOctal(s[i+1]) && isOctal(s[i+2]) && isOctal(s[i+3]) {
			b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }
