package xdg

import "testing"

func TestIndexDir(t *testing.T) {
	tests := []struct {
		flag string
		env  map[string]string
		want string
	}{
		{"/flag", map[string]string{"NASH_INDEX_DIR": "/env"}, "/flag"},
		{"", map[string]string{"NASH_INDEX_DIR": "/env", "XDG_DATA_HOME": "/xdg"}, "/env"},
		{"", map[string]string{"XDG_DATA_HOME": "/xdg", "HOME": "/home/u"}, "/xdg/nash/index"},
		{"", map[string]string{"XDG_DATA_HOME": "relative", "HOME": "/home/u"}, "/home/u/.local/share/nash/index"},
		{"", map[string]string{"HOME": "/home/u"}, "/home/u/.local/share/nash/index"},
	}
	for _, tt := range tests {
		got, err := IndexDir(tt.flag, func(k string) string { return tt.env[k] })
		if err != nil || got != tt.want {
			t.Errorf("IndexDir(%q, %v) = %q, %v; want %q", tt.flag, tt.env, got, err, tt.want)
		}
	}
}
