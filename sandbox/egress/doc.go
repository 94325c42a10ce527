// Package egress decides, outside the sandbox, what a script's network
// attempts may reach, and records every one of them.
//
// The sandbox's network namespace hands nash every TCP connection, DNS query
// and UDP datagram its processes send (see internal/sandboxnet). A Proxy
// takes those sockets: it answers DNS itself (a name gets a stand-in
// address from 198.18.0.0/15, so a name that is not allowed never leaves
// the machine, and one that is is resolved by nash), learns for each
// connection the name asked for (DNS, an HTTP proxy request, TLS SNI,
// HTTP Host) and its address, port and protocol, and checks it against a
// Policy. An allowed connection is dialled from nash's own namespace (so
// the host's loopback services are destinations like any other) and
// relayed, counting bytes each way; a denied one is recorded and closed, and
// the run goes on. Most allowed TCP connections never reach the relay: the
// init offers each connect to nash first (Direct), and the script gets a
// socket of nash's own, connected, whose bytes the kernel counts
// (direct_linux.go); Config.Relay keeps them on the relay. Stop returns
// what was contacted, one Contact per destination.
package egress
