package effects

import (
	"io/fs"
	"sort"
)

// Kind classifies one observed change to a path.
type Kind string

// The kinds of observed change.
const (
	Created     Kind = "created"      // the path did not exist before
	Modified    Kind = "modified"     // same type, different content
	Deleted     Kind = "deleted"      // the path no longer exists
	TypeChanged Kind = "type_changed" // e.g. a file replaced by a directory
	MetaChanged Kind = "meta_changed" // same content; mode, owner, xattrs or times differ
	// Renamed: the directory at From moved whole to Path. The changes
	// below Path are relative to what was below From.
	Renamed Kind = "renamed"
)

// FileType is the type of a file system object.
type FileType string

// The file types a change can involve.
const (
	TypeNone    FileType = ""
	TypeFile    FileType = "file"
	TypeDir     FileType = "dir"
	TypeSymlink FileType = "symlink"
	TypeFIFO    FileType = "fifo"
	TypeSocket  FileType = "socket"
	TypeDevice  FileType = "device"
)

// FileTypeOf maps a mode to a FileType.
func FileTypeOf(m fs.FileMode) FileType {
	switch {
	case m.IsRegular():
		return TypeFile
	case m.IsDir():
		return TypeDir
	case m&fs.ModeSymlink != 0:
		return TypeSymlink
	case m&fs.ModeNamedPipe != 0:
		return TypeFIFO
	case m&fs.ModeSocket != 0:
		return TypeSocket
	default:
		return TypeDevice
	}
}

// Object describes one side (before or after) of a change.
type Object struct {
	Type   FileType    `json:"type,omitempty"`
	Size   int64       `json:"size"`
	Mode   fs.FileMode `json:"mode"` // permission bits plus setuid/setgid/sticky
	UID    int         `json:"uid"`
	GID    int         `json:"gid"`
	Target string      `json:"target,omitempty"` // symlink target
}

// Change is one path that a run changed, with the objects before and after.
// Before is nil for Created, After is nil for Deleted. For Renamed, Before
// is the directory as it was at From.
type Change struct {
	Path   string  `json:"path"` // absolute, as seen on the live file system
	Kind   Kind    `json:"kind"`
	From   string  `json:"from,omitempty"` // for Renamed: where the directory was
	Before *Object `json:"before,omitempty"`
	After  *Object `json:"after,omitempty"`
	// Meta names what differs for MetaChanged (and alongside Modified):
	// "mode", "owner", "target", "xattr", "mtime".
	Meta []string `json:"meta,omitempty"`
}

// ChangeSet is every change a run made, sorted by path.
type ChangeSet struct {
	Changes []Change `json:"changes"`
}

// Sort orders the changes by path.
func (cs *ChangeSet) Sort() {
	sort.Slice(cs.Changes, func(i, j int) bool { return cs.Changes[i].Path < cs.Changes[j].Path })
}

// Len reports the number of changes.
func (cs *ChangeSet) Len() int { return len(cs.Changes) }

// Paths returns the changed paths in order.
func (cs *ChangeSet) Paths() []string {
	out := make([]string, len(cs.Changes))
	for i, c := range cs.Changes {
		out[i] = c.Path
	}
	return out
}
