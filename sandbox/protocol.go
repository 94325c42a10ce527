package sandbox

// protocolVersion changes whenever childConfig or childResult do, or what
// the init is expected to do with them, so a nash-sandbox built from other
// sources is caught, not misread. Version 2: a wire form of its own (see
// protocol_linux.go).
const protocolVersion = 2

// childConfig is what the parent sends the sandbox init over its config pipe
// (encodeConfig; the json tags only name the fields).
type childConfig struct {
	Version     int       `json:"version"`
	Plan        mountPlan `json:"plan"`
	Script      string    `json:"script"`
	Shell       string    `json:"shell"`
	Dir         string    `json:"dir"`
	Env         []string  `json:"env"`
	Net         bool      `json:"net"`         // keep the host network
	Unprotected bool      `json:"unprotected"` // bind what cannot be overlaid, live
	Root        bool      `json:"root"`        // the caller is root on the host
}

// childResult is what the init reports back when the script has ended, or
// when the sandbox could not be built.
type childResult struct {
	Started     bool     `json:"started"` // the script was started
	ExitCode    int      `json:"exit_code"`
	Error       string   `json:"error,omitempty"`
	Failed      []string `json:"failed,omitempty"`      // paths that could not be overlaid
	Unprotected []string `json:"unprotected,omitempty"` // paths bound live instead
}
