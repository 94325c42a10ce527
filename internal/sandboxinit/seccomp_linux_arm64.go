package sandboxinit

import "golang.org/x/sys/unix"

// renameCalls lists the rename and network calls of arm64 (which has no
// rename(2)).
func renameCalls() []renameCall {
	return []renameCall{
		{arch: unix.AUDIT_ARCH_AARCH64, nrs: map[uint32]renameKind{38: callRenameat, 276: callRenameat2}, ioctls: []uint32{29},
			net: map[uint32]renameKind{203: callConnect, 206: callSendto, 211: callSendmsg, 269: callSendmmsg,
				200: callBind, 201: callListen, 425: callRefuse}},
	}
}
