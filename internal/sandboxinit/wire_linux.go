package sandboxinit

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The init's config and result travel in a small binary form of their own,
// not gob: gob builds its coders by reflection the first time each type is
// seen, which costs the short-lived init and nash run several hundred
// microseconds a run. Strings are kept byte for byte (file names need not
// be UTF-8). Every message starts with Magic and Version,
// so an init built from other sources is named as such, not misread.

// Magic opens every message between nash and its sandbox init.
const Magic = "nash-sandbox\x00"

// ErrOtherVersion says the other side speaks another protocol.
var ErrOtherVersion = errors.New("the sandbox init is from another version of nash")

type wireWriter struct{ b []byte }

func newWireWriter() *wireWriter {
	w := &wireWriter{b: make([]byte, 0, 4096)}
	w.b = append(w.b, Magic...)
	w.int(Version)
	return w
}

func (w *wireWriter) int(n int)     { w.b = binary.AppendVarint(w.b, int64(n)) }
func (w *wireWriter) int64(n int64) { w.b = binary.AppendVarint(w.b, n) }
func (w *wireWriter) uint(n uint64) { w.b = binary.AppendUvarint(w.b, n) }
func (w *wireWriter) str(s string) {
	w.b = binary.AppendUvarint(w.b, uint64(len(s)))
	w.b = append(w.b, s...)
}
func (w *wireWriter) bool(v bool) {
	if v {
		w.b = append(w.b, 1)
	} else {
		w.b = append(w.b, 0)
	}
}
func (w *wireWriter) strs(ss []string) {
	w.int(len(ss))
	for _, s := range ss {
		w.str(s)
	}
}

// wireReader reads what wireWriter wrote; the first error sticks.
type wireReader struct {
	b   []byte
	err error
}

// newWireReader checks the magic and version at the start of b.
func newWireReader(b []byte) (*wireReader, error) {
	rest, ok := cutPrefix(b, Magic)
	if !ok {
		return nil, ErrOtherVersion
	}
	r := &wireReader{b: rest}
	if v := r.int(); r.err != nil || v != Version {
		return nil, ErrOtherVersion
	}
	return r, nil
}

func cutPrefix(b []byte, prefix string) ([]byte, bool) {
	if len(b) < len(prefix) || string(b[:len(prefix)]) != prefix {
		return nil, false
	}
	return b[len(prefix):], true
}

func (r *wireReader) fail() {
	if r.err == nil {
		r.err = errors.New("truncated or malformed message")
	}
	r.b = nil
}

func (r *wireReader) int() int {
	n, k := binary.Varint(r.b)
	if k <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[k:]
	return int(n)
}

func (r *wireReader) int64() int64 {
	n, k := binary.Varint(r.b)
	if k <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[k:]
	return n
}

func (r *wireReader) uint() uint64 {
	n, k := binary.Uvarint(r.b)
	if k <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[k:]
	return n
}

// uint32 reads an int and checks it fits.
func (r *wireReader) uint32() uint32 {
	n := r.int64()
	if n < 0 || n > 1<<32-1 {
		r.fail()
		return 0
	}
	return uint32(n)
}

func (r *wireReader) str() string {
	n, k := binary.Uvarint(r.b)
	if k <= 0 || n > uint64(len(r.b)-k) {
		r.fail()
		return ""
	}
	s := string(r.b[k : k+int(n)])
	r.b = r.b[k+int(n):]
	return s
}

func (r *wireReader) bool() bool {
	if len(r.b) == 0 || r.b[0] > 1 {
		r.fail()
		return false
	}
	v := r.b[0] == 1
	r.b = r.b[1:]
	return v
}

// count reads a slice length, bounded by what is left to read (every
// element takes at least one byte), so a bad message cannot make a huge
// allocation.
func (r *wireReader) count() int {
	n := r.int()
	if n < 0 || n > len(r.b) {
		r.fail()
		return 0
	}
	return n
}

func (r *wireReader) strs() []string {
	n := r.count()
	if n == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = r.str()
	}
	return out
}

// done reports the first error, or bytes left over.
func (r *wireReader) done() error {
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%d bytes left over", len(r.b))
	}
	return r.err
}

// EncodeConfig is the wire form of the config the parent sends the init.
func EncodeConfig(c *Config) []byte {
	w := newWireWriter()
	p := &c.Plan
	w.str(p.Root)
	w.int(len(p.Ops))
	for _, o := range p.Ops {
		w.str(string(o.Kind))
		w.str(o.Path)
		w.str(o.Target)
		w.int(int(o.Mode))
		w.int(o.Layer)
		w.bool(o.File)
	}
	w.int(len(p.Layers))
	for _, l := range p.Layers {
		w.str(l.Point)
		w.str(l.Upper)
		w.str(l.Work)
		w.bool(l.Scratch)
		w.bool(l.Top != nil)
		if l.Top != nil {
			w.int64(int64(l.Top.Mode))
			w.int(l.Top.GID)
		}
	}
	w.strs(p.ReadOnly)
	w.strs(p.Hide)
	w.str(p.Broken)
	w.str(p.Scratch)
	w.str(c.Script)
	w.str(c.Shell)
	w.str(c.Dir)
	w.strs(c.Env)
	w.bool(c.Net)
	w.bool(c.Unprotected)
	w.bool(c.Root)
	w.bool(c.Tty != nil)
	if t := c.Tty; t != nil {
		w.int(int(t.Streams))
		for _, f := range []uint32{t.Iflag, t.Oflag, t.Cflag, t.Lflag} {
			w.int64(int64(f))
		}
		w.int(int(t.Line))
		w.str(string(t.Cc))
		w.int64(int64(t.Ispeed))
		w.int64(int64(t.Ospeed))
		for _, n := range t.Size {
			w.int64(int64(n))
		}
	}
	w.int(c.MaxProcs)
	w.int64(c.ScratchSize)
	return w.b
}

// DecodeConfig reads a config in EncodeConfig's form; a message from
// another version of nash is ErrOtherVersion.
func DecodeConfig(b []byte) (*Config, error) {
	r, err := newWireReader(b)
	if err != nil {
		return nil, err
	}
	c := &Config{Version: Version}
	p := &c.Plan
	p.Root = r.str()
	if n := r.count(); n > 0 {
		p.Ops = make([]Op, n)
		for i := range p.Ops {
			o := &p.Ops[i]
			o.Kind = OpKind(r.str())
			o.Path = r.str()
			o.Target = r.str()
			o.Mode = uint32(r.int())
			o.Layer = r.int()
			o.File = r.bool()
		}
	}
	if n := r.count(); n > 0 {
		p.Layers = make([]Layer, n)
		for i := range p.Layers {
			l := &p.Layers[i]
			l.Point, l.Upper, l.Work = r.str(), r.str(), r.str()
			l.Scratch = r.bool()
			if r.bool() {
				l.Top = &Top{Mode: r.uint32(), GID: r.int()}
			}
		}
	}
	p.ReadOnly = r.strs()
	p.Hide = r.strs()
	p.Broken = r.str()
	p.Scratch = r.str()
	c.Script = r.str()
	c.Shell = r.str()
	c.Dir = r.str()
	c.Env = r.strs()
	c.Net = r.bool()
	c.Unprotected = r.bool()
	c.Root = r.bool()
	if r.bool() {
		t := &Tty{}
		t.Streams = uint8(r.int())
		t.Iflag, t.Oflag, t.Cflag, t.Lflag = r.uint32(), r.uint32(), r.uint32(), r.uint32()
		t.Line = uint8(r.int())
		t.Cc = []byte(r.str())
		t.Ispeed, t.Ospeed = r.uint32(), r.uint32()
		for i := range t.Size {
			t.Size[i] = int32(r.int64())
		}
		c.Tty = t
	}
	c.MaxProcs = r.int()
	c.ScratchSize = r.int64()
	if err := r.done(); err != nil {
		return nil, fmt.Errorf("decode sandbox config: %w", err)
	}
	return c, nil
}

// EncodeResult is the wire form of the result the init reports.
func EncodeResult(res *Result) []byte {
	w := newWireWriter()
	w.bool(res.Started)
	w.int(res.ExitCode)
	w.str(res.Error)
	w.strs(res.Failed)
	w.strs(res.Unprotected)
	w.strs(res.Limits)
	w.int(len(res.Renames))
	for _, r := range res.Renames {
		w.str(r.From)
		w.str(r.To)
		w.uint(r.Ino)
	}
	w.bool(res.Sealed)
	return w.b
}

// DecodeResult reads a result in EncodeResult's form.
func DecodeResult(b []byte) (*Result, error) {
	r, err := newWireReader(b)
	if err != nil {
		return nil, err
	}
	res := &Result{}
	res.Started = r.bool()
	res.ExitCode = r.int()
	res.Error = r.str()
	res.Failed = r.strs()
	res.Unprotected = r.strs()
	res.Limits = r.strs()
	if n := r.count(); n > 0 {
		res.Renames = make([]Rename, n)
		for i := range res.Renames {
			m := &res.Renames[i]
			m.From, m.To, m.Ino = r.str(), r.str(), r.uint()
		}
	}
	res.Sealed = r.bool()
	if err := r.done(); err != nil {
		return nil, fmt.Errorf("decode sandbox result: %w", err)
	}
	return res, nil
}
