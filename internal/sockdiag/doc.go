// Package sockdiag asks the kernel about TCP sockets through
// NETLINK_SOCK_DIAG (inet_diag), with raw netlink: whether some socket
// listens on a port, and how many bytes a connection sent and received,
// also after it was closed and destroyed, from the message the kernel
// broadcasts when it destroys a TCP socket.
//
// Sockets are those of the network namespace of the thread that opened
// the netlink socket: the calling thread's for Listening, the thread that
// called Watch for a Watcher.
//
// It links only the standard library and x/sys.
package sockdiag
