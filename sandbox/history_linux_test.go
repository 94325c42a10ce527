package sandbox

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"
)

func contents(t *testing.T, vs []Version) []string {
	t.Helper()
	var out []string
	for _, v := range vs {
		b, err := os.ReadFile(v.Content)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	return out
}

// TestHistoryAndRollback builds versions of one file through nash and
// outside it, then rolls back by number, by date and by count, each as an
// undoable transaction.
func TestHistoryAndRollback(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	f := e.path("f")
	e.sh("echo v1 > f")
	tx1 := e.commit(e.run("echo v2 > f"))
	tx2 := e.commit(e.run("echo v3 > f"))
	// Changed outside nash: the recorder (fed by the index watcher) keeps v4.
	if err := os.WriteFile(f, []byte("v4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := e.sb.RecordVersion(f, 1<<20); err != nil {
		t.Fatal(err)
	}
	if err := e.sb.RecordVersion(f, 1<<20); err != nil { // unchanged: kept once
		t.Fatal(err)
	}
	if err := os.WriteFile(f, []byte("v5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	vs, err := e.sb.History(f)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := contents(t, vs), []string{"v1\n", "v2\n", "v4\n", "v5\n"}; !slices.Equal(got, want) {
		t.Fatalf("history %q, want %q", got, want)
	}
	if vs[0].TxID != tx1.ID || vs[1].TxID != tx2.ID || vs[2].Source != "recorded" || vs[3].Source != "current" {
		t.Fatalf("sources: %+v", vs)
	}

	tests := []struct {
		name   string
		number int
		date   time.Time
		back   int
		want   string
	}{
		{"version 1", 1, time.Time{}, 0, "v1\n"},
		{"between the two commits", 0, tx1.Time.Add(time.Nanosecond), 0, "v2\n"},
		{"before everything", 0, tx1.Time.Add(-time.Hour), 0, "v1\n"},
		{"one back", 0, time.Time{}, 1, "v4\n"},
	}
	for _, tt := range tests {
		vs, err := e.sb.History(f)
		if err != nil {
			t.Fatal(err)
		}
		v, err := PickVersion(vs, tt.number, tt.date, tt.back)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		tx, err := e.sb.Rollback(ctx, f, v)
		if err != nil {
			t.Fatalf("%s: rollback: %v", tt.name, err)
		}
		if b, _ := os.ReadFile(f); string(b) != tt.want {
			t.Fatalf("%s: f = %q, want %q", tt.name, b, tt.want)
		}
		// The rollback is a transaction: undoing it brings v5 back.
		e.undo(tx.ID)
		if b, _ := os.ReadFile(f); string(b) != "v5\n" {
			t.Fatalf("%s: after undoing the rollback f = %q, want v5", tt.name, b)
		}
	}
	if _, err := PickVersion(vs, 9, time.Time{}, 0); err == nil {
		t.Error("version 9 of 4 was picked")
	}
	if _, err := PickVersion(vs, 0, time.Time{}, 4); err == nil {
		t.Error("4 back of 4 versions was picked")
	}
	if _, err := e.sb.Rollback(ctx, f, vs[len(vs)-1]); err == nil {
		t.Error("rolling back to the current version succeeded")
	}
}

func TestRecorderBudget(t *testing.T) {
	e := newEnv(t)
	f := e.path("f")
	for i := range 5 {
		if err := os.WriteFile(f, []byte{byte('a' + i), '\n'}, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := e.sb.RecordVersion(f, 4); err != nil { // room for two 2-byte copies
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(f, []byte("z\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	vs, err := e.sb.History(f)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := contents(t, vs), []string{"d\n", "e\n", "z\n"}; !slices.Equal(got, want) {
		t.Fatalf("history under a 4-byte budget %q, want %q", got, want)
	}
}
