package sandboxinit

// Version changes whenever Config or Result do, or what
// the init is expected to do with them, so a nash-sandbox built from other
// sources is caught, not misread. Version 2: a wire form of its own (see
// wire_linux.go). Version 3: the Result names the directories the init
// moved for the script. Version 4: the init hands the sandbox's network
// traffic to nash when EgressEnvVar names a descriptor. Version 5: the
// terminal, limits, the scratch tmpfs and the control socket's messages.
// Version 6: the Result says whether the script could type into its
// terminal (Sealed).
const Version = 6

// Config is what the parent sends the sandbox init over its config pipe
// (EncodeConfig; the json tags only name the fields).
type Config struct {
	Version     int      `json:"version"`
	Plan        Plan     `json:"plan"`
	Script      string   `json:"script"`
	Shell       string   `json:"shell"`
	Dir         string   `json:"dir"`
	Env         []string `json:"env"`
	Net         bool     `json:"net"`         // keep the host network
	Unprotected bool     `json:"unprotected"` // bind what cannot be overlaid, live
	Root        bool     `json:"root"`        // the caller is root on the host
	// Tty, when set, has the init make a pseudo-terminal in the
	// sandbox's own devpts for the script; the parent relays it.
	Tty *Tty `json:"tty,omitempty"`
	// MaxProcs caps the processes (and threads) of the run; 0: no cap.
	MaxProcs int `json:"max_procs,omitempty"`
	// ScratchSize is the size in bytes of the tmpfs the init mounts at
	// Plan.Scratch for the layers marked Scratch.
	ScratchSize int64 `json:"scratch_size,omitempty"`
}

// Tty is the terminal the script gets: which of its standard streams are
// on it, and the person's terminal's settings and size, which it starts
// with.
type Tty struct {
	Streams uint8    `json:"streams"` // bit i set: the script's fd i is the terminal
	Iflag   uint32   `json:"iflag"`
	Oflag   uint32   `json:"oflag"`
	Cflag   uint32   `json:"cflag"`
	Lflag   uint32   `json:"lflag"`
	Line    uint8    `json:"line"`
	Cc      []byte   `json:"cc"`
	Ispeed  uint32   `json:"ispeed"`
	Ospeed  uint32   `json:"ospeed"`
	Size    [4]int32 `json:"size"` // rows, columns, x pixels, y pixels
}

// Result is what the init reports back when the script has ended, or
// when the sandbox could not be built.
type Result struct {
	Started     bool     `json:"started"` // the script was started
	ExitCode    int      `json:"exit_code"`
	Error       string   `json:"error,omitempty"`
	Failed      []string `json:"failed,omitempty"`      // paths that could not be overlaid
	Unprotected []string `json:"unprotected,omitempty"` // paths bound live instead
	// Limits names the limits the init could not apply ("processes"),
	// so that nash says so rather than pretend.
	Limits []string `json:"limits,omitempty"`
	// Renames are the directories of the lower layers that the init moved
	// for the script (see rename_linux.go), in the order it moved them.
	Renames []Rename `json:"renames,omitempty"`
	// Sealed says the script could not type into its own terminal
	// (TIOCSTI refused by the seccomp filter): what it left unread there
	// was typed by the person, and nash may hand it to its next prompt.
	Sealed bool `json:"sealed,omitempty"`
}

// Rename is a directory that existed before the run and that the script
// renamed: the init replaced it, where it stood, with a directory of the
// upper layer alone holding the same entries (whose inode is Ino), and
// moved that. The directory may have moved again since, by renames the
// kernel carried out alone; its inode follows it.
type Rename struct {
	From string `json:"from"` // where it stood, inside the sandbox and on the host
	To   string `json:"to"`   // where this rename put it
	Ino  uint64 `json:"ino"`  // its inode in the upper dir
}

// OpKind names one step of building the sandbox's root.
type OpKind string

const (
	OpDir     OpKind = "dir"     // a directory in the root skeleton
	OpSymlink OpKind = "symlink" // a symlink in the root skeleton
	OpOverlay OpKind = "overlay" // an overlay whose lower is the host path
	OpBindRO  OpKind = "bind-ro" // a read-only bind of the host path
	OpBindRW  OpKind = "bind-rw" // a live bind: only with Unprotected
	OpProc    OpKind = "proc"    // a fresh procfs
	OpSys     OpKind = "sys"     // a recursive read-only bind of /sys
	OpDev     OpKind = "dev"     // a tmpfs with device nodes, devpts, and /dev/shm
)

// Op is one step; ops run in order, parents before children.
type Op struct {
	Kind   OpKind `json:"k"`
	Path   string `json:"p"`
	Target string `json:"t,omitempty"` // symlink target
	Mode   uint32 `json:"m,omitempty"` // directory permissions
	Layer  int    `json:"l,omitempty"` // overlay layer index; for OpDev the /dev/shm layer or -1
	File   bool   `json:"f,omitempty"` // the bound path is not a directory
}

// Layer is one overlay: the host mount point it covers and its upper and work
// directories.
type Layer struct {
	Point string `json:"point"`
	Upper string `json:"upper"`
	Work  string `json:"work"`
	// Scratch says the upper and work dirs are on the run's scratch
	// tmpfs, which the init mounts and creates them in.
	Scratch bool `json:"scratch,omitempty"`
	// Top, for a Scratch layer of an ordinary user's sandbox, is what
	// the init gives the top of its upper dir (which the overlay's top
	// shows); nil: the mode (and, for root, the owner) of Point.
	Top *Top `json:"top,omitempty"`
}

// Top is the mode and group of an upper dir's top.
type Top struct {
	Mode uint32 `json:"mode"` // permission bits
	GID  int    `json:"gid"`  // -1: the init's own
}

// Plan is everything the sandbox init needs to build the root.
type Plan struct {
	Root     string   `json:"root"`
	Ops      []Op     `json:"ops"`
	Layers   []Layer  `json:"layers"`
	ReadOnly []string `json:"read_only,omitempty"` // paths that stay read-only inside
	Hide     []string `json:"hide,omitempty"`      // dirs covered by an empty read-only tmpfs, sockets by /dev/null
	// Broken, set only by tests, is a path whose overlay is made to fail.
	Broken string `json:"broken,omitempty"`
	// Scratch is where the init mounts the run's size-capped tmpfs, which
	// holds Root and the Scratch layers' dirs. The init hands it back
	// open with the Result: it lives until nash closes it.
	Scratch string `json:"scratch,omitempty"`
}

// Messages on the control socket between nash and the init (a
// SOCK_SEQPACKET pair, the init's fd 4): one kind byte, then the body.
const (
	// MsgTerminal (init to nash) carries the master of the script's
	// pseudo-terminal, attached; its body is empty.
	MsgTerminal byte = 'T'
	// MsgStopped (init to nash) says the script was stopped by a job
	// control signal, whose number is the body's one byte; nash answers
	// with MsgContinue once the person resumes it.
	MsgStopped byte = 'S'
	// MsgContinue (nash to init) continues the stopped script.
	MsgContinue byte = 'C'
	// MsgResult (init to nash) carries the Result (EncodeResult) and,
	// attached, the scratch tmpfs opened O_PATH; the init exits after it.
	MsgResult byte = 'R'
)
