package sandbox

import "syscall"

type unixStat = syscall.Stat_t
