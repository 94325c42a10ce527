// Package indexrpc is the protocol between nash and nash-index, the
// per-user server that holds the file index: the request and response
// types both sides use, their framing on the server's Unix socket, the
// client nash uses and the loop nash-index serves with.
//
// nash-index links bleve, whose package initialisation alone costs
// milliseconds, so the index lives in a process of its own that stays up
// between commands: it keeps the index open and current (its watcher
// re-indexes changed files within a second) and answers nash find, the
// planner and nash index over its socket, index-dir/server.sock. A client
// that finds no server starts one; a server with nothing to do leaves after
// a while. This package links nothing but the standard library, so that
// nash pays nothing for it.
//
// A connection carries one request, then responses until one with Done:
// progress reports of a long indexing run, or watcher events, come before
// it. Each message is a JSON object on a line of its own.
package indexrpc

import (
	"errors"
	"fmt"
	"time"
)

// SocketName is the name of the server's socket in the index directory.
const SocketName = "server.sock"

// Op names what a request asks.
type Op string

// The requests a server answers.
const (
	OpSearch  Op = "search"  // rank files for a query
	OpAdd     Op = "add"     // index paths and keep them indexed
	OpRemove  Op = "remove"  // drop roots from the index
	OpRebuild Op = "rebuild" // index every root again from scratch
	OpStatus  Op = "status"  // what the index holds
	OpWatch   Op = "watch"   // keep the server up and stream its watcher's events until the client leaves
	OpStop    Op = "stop"    // leave now
)

// Request is what a client sends: one per connection.
type Request struct {
	Op Op
	// Expect is the server the client means to talk to; a server that is
	// another answers ErrMismatch (see Identity).
	Expect Identity
	Search *SearchRequest `json:",omitempty"`
	// Paths are what add indexes and remove drops.
	Paths []string `json:",omitempty"`
	// Hidden makes add and rebuild index hidden directories too, from
	// then on.
	Hidden bool `json:",omitempty"`
	// VersionsBudget, for watch, is how many bytes of copies of files
	// changed outside nash the server keeps for nash history (0 records
	// none, -1 keeps the server's setting).
	VersionsBudget int64 `json:",omitempty"`
}

// Identity tells servers apart: one built differently, or configured with
// another embedder, must not answer for the one a client would start.
type Identity struct {
	Build    string // the server executable: path, size, modification time
	Embedder string // the embedder spec (NASH_EMBEDDER and its server), "" for none
}

// SearchRequest is a search.
type SearchRequest struct {
	Query string
	Mode  Mode
	N     int    // files to return
	Dir   string // only files under this absolute directory
	// Plain takes Query as plain words: no phrases, operators or filters.
	Plain bool `json:",omitempty"`
	// Snippets asks for the snippet, title and line of each hit.
	Snippets bool `json:",omitempty"`
}

// Mode selects a ranking.
type Mode string

// Rankings.
const (
	Auto     Mode = ""         // hybrid with an embedder, keyword without
	Keyword  Mode = "keyword"  // words (BM25F over the whole file and its best passage)
	Semantic Mode = "semantic" // meaning (embeddings, else query expansion)
	Hybrid   Mode = "hybrid"   // both, fused
)

// Hit is one file of a ranking.
type Hit struct {
	Path    string  `json:"path"`
	Score   float64 `json:"score"`
	Snippet string  `json:"snippet,omitempty"`
	Line    int     `json:"line,omitempty"` // where the snippet starts
	Title   string  `json:"title,omitempty"`
}

// SearchResult is a ranking of files.
type SearchResult struct {
	Hits []Hit
	Mode Mode // the ranking used
	// Notice says what the server did instead of what was asked, or why
	// the answer may be stale; it is meant for the person.
	Notice string `json:",omitempty"`
}

// Stats summarises an indexing run.
type Stats struct {
	Seen, Indexed, Unchanged, Removed, Chunks int
	Skipped                                   []Skipped `json:",omitempty"`
	// EmbedErr is the first embedding failure; the keyword index was
	// updated regardless.
	EmbedErr string `json:",omitempty"`
	Elapsed  time.Duration
}

// Skipped is a file left out of the index, with the reason.
type Skipped struct {
	Path   string
	Reason string
}

// Status describes the index.
type Status struct {
	Dir       string
	Roots     []string
	Files     int
	Chunks    int
	Skipped   []Skipped `json:",omitempty"`
	Vectors   int
	Model     string
	SizeBytes int64
	// Catching is set while the server brings the index in step with what
	// changed while no server watched.
	Catching bool `json:",omitempty"`
	Server   Server
}

// Server describes the server process.
type Server struct {
	PID     int
	Started time.Time
	PeakRSS int64 // bytes, the most memory it has held
}

// Progress reports an indexing run in flight.
type Progress struct {
	Seen, Indexed, Skipped int
	Path                   string
}

// Event is something the server's watcher did.
type Event struct {
	Op      string   // "sync" (paths re-indexed), "rescan" (every root), "error", "ready"
	Paths   []string `json:",omitempty"`
	Indexed int      `json:",omitempty"`
	Removed int      `json:",omitempty"`
	Err     string   `json:",omitempty"`
}

// Response is one message from the server. The last of a request has
// Done set, and either the answer or Err.
type Response struct {
	Done     bool
	Progress *Progress     `json:",omitempty"`
	Event    *Event        `json:",omitempty"`
	Search   *SearchResult `json:",omitempty"`
	Stats    *Stats        `json:",omitempty"`
	Status   *Status       `json:",omitempty"`
	Err      *Error        `json:",omitempty"`
}

// Kind classifies an Error.
type Kind string

// Kinds of errors.
const (
	KindFailed   Kind = "failed"   // the request failed; Msg says why
	KindQuery    Kind = "query"    // the query did not parse: Msg at byte Pos
	KindEmpty    Kind = "empty"    // the index has no roots
	KindMismatch Kind = "mismatch" // the server is not the one the client expects
	KindBusy     Kind = "busy"     // the server cannot stop now: it is writing the index
	KindBadOp    Kind = "badop"    // the server does not know the request
)

// Error is a failure the server reports.
type Error struct {
	Kind Kind
	Msg  string
	Pos  int `json:",omitempty"`
}

// Error returns the message.
func (e *Error) Error() string {
	if e.Kind == KindQuery {
		return fmt.Sprintf("query at %d: %s", e.Pos, e.Msg)
	}
	return e.Msg
}

// Is makes errors.Is(err, ErrEmpty) and the like true for an Error of
// that kind.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrEmpty:
		return e.Kind == KindEmpty
	case ErrMismatch:
		return e.Kind == KindMismatch
	case ErrBusy:
		return e.Kind == KindBusy
	}
	return false
}

// Errors a client tests for with errors.Is.
var (
	// ErrEmpty: the index has no roots, or does not exist.
	ErrEmpty = errors.New("the index is empty; add files with nash index add PATH")
	// ErrMismatch: the running server is another build or configuration.
	ErrMismatch = errors.New("the index server is another build or configuration")
	// ErrBusy: the server is writing the index and cannot stop.
	ErrBusy = errors.New("the index server is busy writing the index")
	// ErrNoServer: no server answers, and none could be started.
	ErrNoServer = errors.New("no index server answers")
)

// EmbedderOf is the Embedder of an Identity for a server configured by
// the environment getenv reads: NASH_EMBEDDER and where its server is.
func EmbedderOf(getenv func(string) string) string {
	spec := getenv("NASH_EMBEDDER")
	if spec == "" || spec == "none" {
		return ""
	}
	return spec + " " + getenv("NASH_EMBED_URL") + " " + getenv("OLLAMA_HOST")
}
