package sandboxinit

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// openTerminal makes the script's pseudo-terminal in the sandbox's own
// devpts (so that tty names a terminal that exists inside), set up as
// the person's: same settings, same size. It returns the master, for
// nash to relay, and the slave, for the script; both close-on-exec.
func openTerminal(t *Tty) (master, slave int, err error) {
	master, err = unix.Open("/dev/pts/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, -1, fmt.Errorf("open /dev/pts/ptmx: %w", err)
	}
	if err := unix.IoctlSetPointerInt(master, unix.TIOCSPTLCK, 0); err != nil {
		unix.Close(master)
		return -1, -1, fmt.Errorf("unlock the terminal: %w", err)
	}
	s, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(master), unix.TIOCGPTPEER, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC)
	if errno != 0 {
		unix.Close(master)
		return -1, -1, fmt.Errorf("open the terminal: %w", errno)
	}
	slave = int(s)
	tio := unix.Termios{Iflag: t.Iflag, Oflag: t.Oflag, Cflag: t.Cflag, Lflag: t.Lflag, Line: t.Line, Ispeed: t.Ispeed, Ospeed: t.Ospeed}
	copy(tio.Cc[:], t.Cc)
	if err := unix.IoctlSetTermios(slave, unix.TCSETS, &tio); err != nil {
		unix.Close(master)
		unix.Close(slave)
		return -1, -1, fmt.Errorf("set up the terminal: %w", err)
	}
	ws := unix.Winsize{Row: uint16(t.Size[0]), Col: uint16(t.Size[1]), Xpixel: uint16(t.Size[2]), Ypixel: uint16(t.Size[3])}
	if err := unix.IoctlSetWinsize(slave, unix.TIOCSWINSZ, &ws); err != nil {
		unix.Close(master)
		unix.Close(slave)
		return -1, -1, fmt.Errorf("size the terminal: %w", err)
	}
	return master, slave, nil
}
