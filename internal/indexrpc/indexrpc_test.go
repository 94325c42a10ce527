package indexrpc

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServeAndClient: a request and its responses cross the socket, in a
// directory whose path is too long for a socket address, and the
// server's errors come back typed.
func TestServeAndClient(t *testing.T) {
	dir := filepath.Join(t.TempDir(), strings.Repeat("d", 60), strings.Repeat("e", 60))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if len(filepath.Join(dir, SocketName)) <= maxSocketPath {
		t.Fatalf("the test directory is too short to test long socket paths")
	}
	ln, err := Listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	want := Identity{Build: "b1"}
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, ln, func(ctx context.Context, req Request, send func(Response) error) Response {
			if req.Op != OpStop && req.Expect != want {
				return Response{Err: &Error{Kind: KindMismatch, Msg: "no"}}
			}
			switch req.Op {
			case OpSearch:
				if req.Search.Query == "(" {
					return Response{Err: &Error{Kind: KindQuery, Msg: "unclosed (", Pos: 0}}
				}
				return Response{Search: &SearchResult{Hits: []Hit{{Path: "/a", Score: 1}}, Mode: Keyword}}
			case OpAdd:
				send(Response{Progress: &Progress{Seen: 1}})
				send(Response{Progress: &Progress{Seen: 2}})
				return Response{Stats: &Stats{Indexed: 2}}
			case OpStatus:
				return Response{Err: &Error{Kind: KindEmpty, Msg: ErrEmpty.Error()}}
			}
			return Response{Err: &Error{Kind: KindBadOp, Msg: "?"}}
		})
	}()
	c := &Client{Dir: dir, Expect: want}
	res, err := c.Search(ctx, SearchRequest{Query: "x", N: 1})
	if err != nil || len(res.Hits) != 1 || res.Hits[0].Path != "/a" {
		t.Errorf("search: %+v, %v", res, err)
	}
	var re *Error
	if _, err := c.Search(ctx, SearchRequest{Query: "("}); !errors.As(err, &re) || re.Kind != KindQuery || !strings.Contains(err.Error(), "unclosed") {
		t.Errorf("bad query: %v", err)
	}
	var seen []int
	st, err := c.Add(ctx, []string{"/x"}, false, func(p Progress) { seen = append(seen, p.Seen) })
	if err != nil || st.Indexed != 2 || len(seen) != 2 {
		t.Errorf("add: %+v, %v, progress %v", st, err, seen)
	}
	if _, err := c.Status(ctx); !errors.Is(err, ErrEmpty) {
		t.Errorf("status: %v, want ErrEmpty", err)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return when its context ended")
	}
	if _, err := os.Stat(filepath.Join(dir, SocketName)); !os.IsNotExist(err) {
		t.Errorf("socket left behind: %v", err)
	}
	// No server, no index, and nothing to start: the index is empty.
	if _, err := c.Search(context.Background(), SearchRequest{Query: "x"}); !errors.Is(err, ErrEmpty) {
		t.Errorf("search without a server or an index: %v, want ErrEmpty", err)
	}
}
