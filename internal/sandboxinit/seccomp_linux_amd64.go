package sandboxinit

import "golang.org/x/sys/unix"

// renameCalls lists the rename and network calls of the architectures an
// amd64 kernel runs: x86-64 (and x32, whose numbers carry bit 30), and
// i386 (whose socketcall multiplexes the network calls).
func renameCalls() []renameCall {
	const x32 = 0x40000000
	return []renameCall{
		{arch: unix.AUDIT_ARCH_X86_64, nrs: map[uint32]renameKind{
			82: callRename, 264: callRenameat, 316: callRenameat2,
			x32 | 82: callRename, x32 | 264: callRenameat, x32 | 316: callRenameat2,
		}, ioctls: []uint32{16, x32 | 514}, net: map[uint32]renameKind{
			42: callConnect, 44: callSendto, 46: callSendmsg, 307: callSendmmsg,
			49: callBind, 50: callListen, 425: callRefuse,
			x32 | 42: callConnect, x32 | 44: callSendto, x32 | 518: callNetOther, x32 | 538: callNetOther,
			x32 | 49: callBind, x32 | 50: callListen, x32 | 425: callRefuse,
		}},
		{arch: unix.AUDIT_ARCH_I386, nrs: map[uint32]renameKind{
			38: callRename, 302: callRenameat, 353: callRenameat2,
		}, ioctls: []uint32{54}, net: map[uint32]renameKind{
			102: callNetOther, 362: callNetOther, 369: callNetOther, 370: callNetOther, 345: callNetOther,
			361: callNetOther, 363: callNetOther, 425: callRefuse,
		}},
	}
}
