package planner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// RetryPolicy says how often and how long to wait before asking a provider
// again after a 429 or 5xx answer.
type RetryPolicy struct {
	// Attempts is the number of tries in all, the first included; 1 turns
	// retries off.
	Attempts int
	// BaseDelay is the wait before the second try; it doubles each time.
	BaseDelay time.Duration
	// MaxDelay caps one wait, whether computed or asked for by Retry-After.
	// A Retry-After longer than MaxDelay is not waited for: the call fails
	// with a *StatusError that carries it, so the person can decide.
	MaxDelay time.Duration
}

// DefaultRetryPolicy returns the policy a Planner uses unless told
// otherwise: three tries, waits of 1 s and 2 s, Retry-After honoured up to
// 30 s.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{Attempts: 3, BaseDelay: time.Second, MaxDelay: 30 * time.Second}
}

// SleepFunc waits for d or until ctx is done, whichever comes first, and
// returns ctx.Err() in the second case. Tests swap it to run without waiting.
type SleepFunc func(ctx context.Context, d time.Duration) error

// Sleep is the real SleepFunc.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// StatusError is an HTTP error answer from a provider, after retries.
type StatusError struct {
	StatusCode int
	// Body is the start of the answer's body, for the person to read.
	Body string
	// RetryAfter is what the server asked for, zero when it did not say.
	RetryAfter time.Duration
	// Attempts is how many times the request was sent.
	Attempts int
}

// Error gives the status, the attempts, Retry-After and the start of the body.
func (e *StatusError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "provider answered HTTP %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " %d times", e.Attempts)
	}
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, " (retry after %s)", e.RetryAfter)
	}
	if e.Body != "" {
		fmt.Fprintf(&b, ": %s", e.Body)
	}
	return b.String()
}

// Temporary reports whether the same request may succeed later (429, 5xx).
func (e *StatusError) Temporary() bool { return retryable(e.StatusCode) }

// ErrAnswerTooLarge is returned when a provider's answer exceeds the size
// limit (see MaxAnswerBytes).
var ErrAnswerTooLarge = errors.New("answer too large")

// transport wraps an http.RoundTripper with retries, Retry-After, a cap on
// the body size and uniform errors. It records the last failure of each
// call in the call's context, because some langchaingo clients replace
// transport errors with plain strings.
type transport struct {
	base    http.RoundTripper
	policy  RetryPolicy
	sleep   SleepFunc
	now     func() time.Time
	maxBody int64
}

// callRecord collects what the transport saw during one model call.
type callRecord struct {
	mu       sync.Mutex
	err      error
	requests int
}

func (r *callRecord) set(err error) {
	r.mu.Lock()
	r.err = err
	r.mu.Unlock()
}

func (r *callRecord) sent() {
	r.mu.Lock()
	r.requests++
	r.mu.Unlock()
}

func (r *callRecord) last() (error, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err, r.requests
}

type callRecordKey struct{}

func withCallRecord(ctx context.Context) (context.Context, *callRecord) {
	r := &callRecord{}
	return context.WithValue(ctx, callRecordKey{}, r), r
}

func recordOf(ctx context.Context) *callRecord {
	r, _ := ctx.Value(callRecordKey{}).(*callRecord)
	return r
}

func retryable(code int) bool {
	return code == http.StatusTooManyRequests || code >= 500
}

// RoundTrip implements http.RoundTripper.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	rec := recordOf(req.Context())
	attempts := max(t.policy.Attempts, 1)
	canReplay := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
	for attempt := 1; ; attempt++ {
		r := req
		if attempt > 1 && req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, fmt.Errorf("replay request body: %w", err)
			}
			r = req.Clone(req.Context())
			r.Body = body
		}
		if rec != nil {
			rec.sent()
		}
		resp, err := t.base.RoundTrip(r)
		if err != nil {
			if rec != nil {
				rec.set(err)
			}
			return nil, err
		}
		if resp.StatusCode < 400 {
			if t.maxBody > 0 {
				resp.Body = &limitedBody{rc: resp.Body, left: t.maxBody, rec: rec}
			}
			return resp, nil
		}
		serr := &StatusError{
			StatusCode: resp.StatusCode,
			Body:       readSnippet(resp.Body, 300),
			RetryAfter: parseRetryAfter(resp.Header.Get("Retry-After"), t.now()),
			Attempts:   attempt,
		}
		resp.Body.Close()
		if rec != nil {
			rec.set(serr)
		}
		if !retryable(resp.StatusCode) || attempt >= attempts || !canReplay {
			return nil, serr
		}
		wait := t.policy.BaseDelay << (attempt - 1)
		if serr.RetryAfter > 0 {
			wait = serr.RetryAfter
		}
		if t.policy.MaxDelay > 0 && wait > t.policy.MaxDelay {
			if serr.RetryAfter > 0 {
				return nil, serr // the server wants longer than we wait
			}
			wait = t.policy.MaxDelay
		}
		if err := t.sleep(req.Context(), wait); err != nil {
			return nil, err
		}
	}
}

// parseRetryAfter reads a Retry-After header: seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil {
		if s < 0 {
			return 0
		}
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// readSnippet reads at most n bytes of r as one line of printable text.
func readSnippet(r io.Reader, n int) string {
	b, _ := io.ReadAll(io.LimitReader(r, int64(n)))
	s := strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, string(b))
	return strings.TrimSpace(strings.Join(strings.Fields(s), " "))
}

// limitedBody fails with ErrAnswerTooLarge once more than left bytes are read.
type limitedBody struct {
	rc   io.ReadCloser
	left int64
	rec  *callRecord
}

// Read reads from the body until the limit is passed.
func (l *limitedBody) Read(p []byte) (int, error) {
	if l.left <= 0 {
		// Probe for one more byte: exactly at the limit is fine.
		var one [1]byte
		n, err := l.rc.Read(one[:])
		if n > 0 {
			if l.rec != nil {
				l.rec.set(ErrAnswerTooLarge)
			}
			return 0, ErrAnswerTooLarge
		}
		return 0, err
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.rc.Read(p)
	l.left -= int64(n)
	return n, err
}

// Close closes the body.
func (l *limitedBody) Close() error { return l.rc.Close() }
