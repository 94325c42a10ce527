package sandboxinit

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// The supervisor renames a directory with the credentials of the process
// that asked, so the kernel checks the call exactly as it would have
// checked the caller's own: file-system ids, supplementary groups and
// effective capabilities, set on the supervisor's locked thread alone and
// put back after the call.

// selfIDs is the supervisor thread's own credentials.
type selfIDs struct {
	fsuid, fsgid int
	groups       []int
	caps         [2]unix.CapUserData
	broken       bool // they could not be read: run nothing as another
}

func (s *selfIDs) read() error {
	s.fsuid, s.fsgid = unix.Geteuid(), unix.Getegid()
	g, err := unix.Getgroups()
	if err != nil {
		return err
	}
	s.groups = g
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	return unix.Capget(&hdr, &s.caps[0])
}

// callerIDs is what the supervisor takes on from a caller.
type callerIDs struct {
	fsuid, fsgid int
	groups       []int
	capEff       uint64
}

// readCaller reads the credentials of process pid from its status file.
func readCaller(pid int) (*callerIDs, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return nil, err
	}
	return parseStatus(b)
}

// parseStatus reads the Uid, Gid, Groups and CapEff lines of a
// /proc/PID/status file.
func parseStatus(b []byte) (*callerIDs, error) {
	c := &callerIDs{fsuid: -1, fsgid: -1}
	seen := 0
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		f := strings.Fields(val)
		switch key {
		case "Uid", "Gid":
			if len(f) != 4 {
				return nil, fmt.Errorf("status: bad %s line", key)
			}
			n, err := strconv.Atoi(f[3]) // the file-system id
			if err != nil {
				return nil, fmt.Errorf("status: bad %s line", key)
			}
			if key == "Uid" {
				c.fsuid = n
			} else {
				c.fsgid = n
			}
			seen++
		case "Groups":
			for _, s := range f {
				n, err := strconv.Atoi(s)
				if err != nil {
					return nil, errors.New("status: bad Groups line")
				}
				c.groups = append(c.groups, n)
			}
			seen++
		case "CapEff":
			if len(f) != 1 {
				return nil, errors.New("status: bad CapEff line")
			}
			n, err := strconv.ParseUint(f[0], 16, 64)
			if err != nil {
				return nil, errors.New("status: bad CapEff line")
			}
			c.capEff = n
			seen++
		}
	}
	if seen != 4 {
		return nil, errors.New("status: missing lines")
	}
	return c, nil
}

// assume gives the calling thread (locked) the caller's credentials. On
// error the thread may be half-changed: restore it.
func (s *selfIDs) assume(c *callerIDs) error {
	if s.broken {
		return errors.New("own credentials unknown")
	}
	if !sameGroups(c.groups, s.groups) {
		// Refused where setgroups is denied (an ordinary user's
		// sandbox), whose callers cannot have changed theirs either.
		if err := unix.Setgroups(c.groups); err != nil {
			return fmt.Errorf("setgroups: %w", err)
		}
	}
	if err := setfsid(unix.SetfsgidRetGid, c.fsgid); err != nil {
		return fmt.Errorf("setfsgid: %w", err)
	}
	if err := setfsid(unix.SetfsuidRetUid, c.fsuid); err != nil {
		return fmt.Errorf("setfsuid: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	data := s.caps
	data[0].Effective = uint32(c.capEff) & data[0].Permitted
	data[1].Effective = uint32(c.capEff>>32) & data[1].Permitted
	return unix.Capset(&hdr, &data[0])
}

// restore puts the thread's own credentials back.
func (s *selfIDs) restore() error {
	if err := setfsid(unix.SetfsuidRetUid, s.fsuid); err != nil {
		return err
	}
	if err := setfsid(unix.SetfsgidRetGid, s.fsgid); err != nil {
		return err
	}
	if g, err := unix.Getgroups(); err != nil || !sameGroups(g, s.groups) {
		if err := unix.Setgroups(s.groups); err != nil {
			return err
		}
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	data := s.caps
	return unix.Capset(&hdr, &data[0])
}

// setfsid sets a file-system id and checks that it took: the calls report
// no error when they refuse.
func setfsid(set func(int) (int, error), id int) error {
	if _, err := set(id); err != nil {
		return err
	}
	if now, _ := set(-1); now != id {
		return unix.EPERM
	}
	return nil
}

func sameGroups(a, b []int) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
