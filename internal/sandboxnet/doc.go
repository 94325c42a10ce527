// Package sandboxnet makes the sandbox's network namespace hand every
// attempt to reach the network to nash, and carries the sockets that catch
// them from the sandbox init to nash.
//
// When the script first sends to an address outside its loopback, the init
// (which holds CAP_NET_ADMIN over the sandbox's own namespace, also for an
// ordinary user) sets that namespace up: it adds routes that make every
// address local (local 0.0.0.0/0 and ::/0 on lo) and an nftables table
// whose prerouting chain sends every TCP connection and every UDP datagram, save those
// between the sandbox's own sockets on its loopback, to transparent
// (IP_TRANSPARENT) sockets it opened there; DNS to any address reaches a
// socket bound to port 53. ICMP echo to any address but the loopback is
// dropped, so ping does not answer for hosts it never reached. Nothing is
// forwarded anywhere: the sockets go to nash (SCM_RIGHTS over a unix
// socket), which decides, outside the sandbox, what each connection may
// reach (package sandbox/egress).
//
// It links only the standard library and x/sys, as the init does.
package sandboxnet
