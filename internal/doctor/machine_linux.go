package doctor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

func statfs(path string) (Space, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return Space{}, &os.PathError{Op: "statfs", Path: path, Err: err}
	}
	return Space{Free: st.Bavail * uint64(st.Bsize), Total: st.Blocks * uint64(st.Bsize)}, nil
}

// userNS runs true in a new user namespace with a mount namespace, the
// person's uid and gid mapped, as the sandbox starts its init.
func userNS(ctx context.Context) error {
	t, err := exec.LookPath("true")
	if err != nil {
		return fmt.Errorf("find true: %w", err)
	}
	cmd := exec.CommandContext(ctx, t)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:                 syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}},
		GidMappingsEnableSetgroups: false,
	}
	err = cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		// Started in the namespaces; true failing there is odd but not
		// the namespaces' fault.
		return nil
	}
	return err
}
