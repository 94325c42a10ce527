package sandboxinit

import "golang.org/x/sys/unix"

// renameCalls lists the rename calls of the architectures an amd64 kernel
// runs: x86-64 (and x32, whose numbers carry bit 30), and i386.
func renameCalls() []renameCall {
	const x32 = 0x40000000
	return []renameCall{
		{arch: unix.AUDIT_ARCH_X86_64, nrs: map[uint32]renameKind{
			82: callRename, 264: callRenameat, 316: callRenameat2,
			x32 | 82: callRename, x32 | 264: callRenameat, x32 | 316: callRenameat2,
		}, ioctls: []uint32{16, x32 | 514}},
		{arch: unix.AUDIT_ARCH_I386, nrs: map[uint32]renameKind{
			38: callRename, 302: callRenameat, 353: callRenameat2,
		}, ioctls: []uint32{54}},
	}
}
