package sandboxnet

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/sys/unix"
)

// nftables attributes x/sys does not name (linux/netfilter/nf_tables.h).
const (
	nftaSocketKey       = 1
	nftaSocketDreg      = 2
	nftSocketTransparnt = 0
	nftaTproxyFamily    = 1
	nftaTproxyRegPort   = 3
	nfAccept            = 1
	nfDrop              = 0
)

// Table and chain names, as `nft list ruleset` shows them inside.
const (
	tableName = "nash"
	chainName = "egress"
)

// ports are the ports of the catching sockets the rules send traffic to:
// each is bound to the same port in both families.
type ports struct {
	tcp, udp uint16
}

// addRoutes makes every address local: a connection to any of them is
// delivered in the namespace, where the nftables rules take it.
func addRoutes(v6 bool) error {
	families := []uint8{unix.AF_INET}
	if v6 {
		families = append(families, unix.AF_INET6)
	}
	var msgs []*msg
	for _, f := range families {
		// struct rtmsg: family, dst_len, src_len, tos, table, protocol,
		// scope, type, flags.
		fixed := []byte{f, 0, 0, 0, unix.RT_TABLE_LOCAL, unix.RTPROT_BOOT, unix.RT_SCOPE_HOST, unix.RTN_LOCAL, 0, 0, 0, 0}
		m := newMsg(unix.RTM_NEWROUTE, unix.NLM_F_REQUEST|unix.NLM_F_CREATE|unix.NLM_F_EXCL|unix.NLM_F_ACK, fixed)
		m.u32(unix.RTA_OIF, loIndex)
		msgs = append(msgs, m)
	}
	if err := talk(unix.NETLINK_ROUTE, msgs, len(msgs)); err != nil {
		return fmt.Errorf("add routes: %w", err)
	}
	return nil
}

// loIndex is the loopback's interface index, 1 in every new namespace.
const loIndex = 1

// rule is the expressions of one nftables rule, in order.
type rule []func(m *msg)

func expr(name string, fill func(m *msg)) func(m *msg) {
	return func(m *msg) {
		m.nest(unix.NFTA_LIST_ELEM, func() {
			m.str(unix.NFTA_EXPR_NAME, name)
			m.nest(unix.NFTA_EXPR_DATA, func() { fill(m) })
		})
	}
}

func meta(key uint32) func(m *msg) {
	return expr("meta", func(m *msg) {
		m.be32(unix.NFTA_META_DREG, unix.NFT_REG_1)
		m.be32(unix.NFTA_META_KEY, key)
	})
}

func payload(base, off, n uint32) func(m *msg) {
	return expr("payload", func(m *msg) {
		m.be32(unix.NFTA_PAYLOAD_DREG, unix.NFT_REG_1)
		m.be32(unix.NFTA_PAYLOAD_BASE, base)
		m.be32(unix.NFTA_PAYLOAD_OFFSET, off)
		m.be32(unix.NFTA_PAYLOAD_LEN, n)
	})
}

func cmp(op uint32, data ...byte) func(m *msg) {
	return expr("cmp", func(m *msg) {
		m.be32(unix.NFTA_CMP_SREG, unix.NFT_REG_1)
		m.be32(unix.NFTA_CMP_OP, op)
		m.nest(unix.NFTA_CMP_DATA, func() { m.attr(unix.NFTA_DATA_VALUE, data) })
	})
}

func socketTransparent() func(m *msg) {
	return expr("socket", func(m *msg) {
		m.be32(nftaSocketKey, nftSocketTransparnt)
		m.be32(nftaSocketDreg, unix.NFT_REG_1)
	})
}

// tproxy sends the packet to the socket at port of its own family.
func tproxy(port uint16) []func(m *msg) {
	return []func(m *msg){
		expr("immediate", func(m *msg) {
			m.be32(unix.NFTA_IMMEDIATE_DREG, unix.NFT_REG_1)
			m.nest(unix.NFTA_IMMEDIATE_DATA, func() {
				m.attr(unix.NFTA_DATA_VALUE, binary.BigEndian.AppendUint16(nil, port))
			})
		}),
		expr("tproxy", func(m *msg) {
			m.be32(nftaTproxyFamily, unix.NFPROTO_UNSPEC)
			m.be32(nftaTproxyRegPort, unix.NFT_REG_1)
		}),
	}
}

func verdict(code uint32) func(m *msg) {
	return expr("immediate", func(m *msg) {
		m.be32(unix.NFTA_IMMEDIATE_DREG, unix.NFT_REG_VERDICT)
		m.nest(unix.NFTA_IMMEDIATE_DATA, func() {
			m.nest(unix.NFTA_DATA_VERDICT, func() { m.be32(unix.NFTA_VERDICT_CODE, code) })
		})
	})
}

// rules is the chain, in nft's words:
//
//	socket transparent 0 accept                  # the sandbox's own sockets
//	meta l4proto tcp tproxy to :TCP accept
//	udp dport != 53 tproxy to :UDP accept        # DNS reaches port 53
//	meta l4proto icmp ip daddr != 127.0.0.0/8 drop
//	meta l4proto ipv6-icmp ip6 daddr != ::1 drop
//
// A packet for a socket of the sandbox's own (a server it runs, a client
// waiting for its answer, the DNS socket) goes to it; every other TCP
// connection and UDP datagram goes to the catching sockets. A packet of an
// established connection to them is given to its socket by tproxy itself.
// ICMP to any address but the loopback is dropped: every address being
// local, ping would otherwise get answers from hosts it never reached.
func rules(p ports) []rule {
	nh, th := uint32(unix.NFT_PAYLOAD_NETWORK_HEADER), uint32(unix.NFT_PAYLOAD_TRANSPORT_HEADER)
	return []rule{
		{socketTransparent(), cmp(unix.NFT_CMP_EQ, 0), verdict(nfAccept)},
		append(rule{meta(unix.NFT_META_L4PROTO), cmp(unix.NFT_CMP_EQ, unix.IPPROTO_TCP)}, append(tproxy(p.tcp), verdict(nfAccept))...),
		append(rule{meta(unix.NFT_META_L4PROTO), cmp(unix.NFT_CMP_EQ, unix.IPPROTO_UDP), payload(th, 2, 2), cmp(unix.NFT_CMP_NEQ, 0, DNSPort)}, append(tproxy(p.udp), verdict(nfAccept))...),
		{meta(unix.NFT_META_NFPROTO), cmp(unix.NFT_CMP_EQ, unix.NFPROTO_IPV4), meta(unix.NFT_META_L4PROTO), cmp(unix.NFT_CMP_EQ, unix.IPPROTO_ICMP), payload(nh, 16, 1), cmp(unix.NFT_CMP_NEQ, 127), verdict(nfDrop)},
		{meta(unix.NFT_META_NFPROTO), cmp(unix.NFT_CMP_EQ, unix.NFPROTO_IPV6), meta(unix.NFT_META_L4PROTO), cmp(unix.NFT_CMP_EQ, unix.IPPROTO_ICMPV6), payload(nh, 24, 16), cmp(unix.NFT_CMP_NEQ, loopback6...), verdict(nfDrop)},
	}
}

var loopback6 = []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}

// addRules installs the table, its chain and rules in one batch.
func addRules(p ports) error {
	nfgen := func(family uint8, resID uint16) []byte {
		return []byte{family, unix.NFNETLINK_V0, byte(resID >> 8), byte(resID)}
	}
	nft := func(typ uint16) uint16 { return unix.NFNL_SUBSYS_NFTABLES<<8 | typ }
	create := uint16(unix.NLM_F_REQUEST | unix.NLM_F_CREATE | unix.NLM_F_ACK)
	msgs := []*msg{newMsg(unix.NFNL_MSG_BATCH_BEGIN, unix.NLM_F_REQUEST, nfgen(unix.AF_UNSPEC, unix.NFNL_SUBSYS_NFTABLES))}
	t := newMsg(nft(unix.NFT_MSG_NEWTABLE), create, nfgen(unix.NFPROTO_INET, 0))
	t.str(unix.NFTA_TABLE_NAME, tableName)
	msgs = append(msgs, t)
	c := newMsg(nft(unix.NFT_MSG_NEWCHAIN), create, nfgen(unix.NFPROTO_INET, 0))
	c.str(unix.NFTA_CHAIN_TABLE, tableName)
	c.str(unix.NFTA_CHAIN_NAME, chainName)
	c.nest(unix.NFTA_CHAIN_HOOK, func() {
		c.be32(unix.NFTA_HOOK_HOOKNUM, unix.NF_INET_PRE_ROUTING)
		prio := int32(-150) // mangle, where tproxy belongs
		c.be32(unix.NFTA_HOOK_PRIORITY, uint32(prio))
	})
	c.be32(unix.NFTA_CHAIN_POLICY, nfAccept)
	c.str(unix.NFTA_CHAIN_TYPE, "filter")
	msgs = append(msgs, c)
	for _, r := range rules(p) {
		m := newMsg(nft(unix.NFT_MSG_NEWRULE), create|unix.NLM_F_APPEND, nfgen(unix.NFPROTO_INET, 0))
		m.str(unix.NFTA_RULE_TABLE, tableName)
		m.str(unix.NFTA_RULE_CHAIN, chainName)
		m.nest(unix.NFTA_RULE_EXPRESSIONS, func() {
			for _, e := range r {
				e(m)
			}
		})
		msgs = append(msgs, m)
	}
	msgs = append(msgs, newMsg(unix.NFNL_MSG_BATCH_END, unix.NLM_F_REQUEST, nfgen(unix.AF_UNSPEC, unix.NFNL_SUBSYS_NFTABLES)))
	if err := talk(unix.NETLINK_NETFILTER, msgs, len(msgs)-2); err != nil {
		return fmt.Errorf("add nftables rules: %w", err)
	}
	return nil
}
