#include <rte_ethdev.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_hash_crc.h>
#include <rte_lcore.h>
#include <rte_lpm.h>
#include <rte_mbuf.h>
#include <rte_rcu_qsbr.h>

#include "shim.h"

uint16_t shim_rx_burst(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n)
{
	return rte_eth_rx_burst(port, queue, pkts, n);
}

uint16_t shim_tx_burst(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n)
{
	return rte_eth_tx_burst(port, queue, pkts, n);
}

void shim_pktmbuf_free(struct rte_mbuf *m)
{
	rte_pktmbuf_free(m);
}

int shim_lpm_lookup_bulk(const struct rte_lpm *lpm, const uint32_t *ips, uint32_t *next_hops, unsigned n)
{
	return rte_lpm_lookup_bulk(lpm, ips, next_hops, n);
}

void shim_rcu_qsbr_thread_online(struct rte_rcu_qsbr *v, unsigned thread_id)
{
	rte_rcu_qsbr_thread_online(v, thread_id);
}

void shim_rcu_qsbr_thread_offline(struct rte_rcu_qsbr *v, unsigned thread_id)
{
	rte_rcu_qsbr_thread_offline(v, thread_id);
}

void shim_rcu_qsbr_quiescent(struct rte_rcu_qsbr *v, unsigned thread_id)
{
	rte_rcu_qsbr_quiescent(v, thread_id);
}

uint64_t shim_rcu_qsbr_start(struct rte_rcu_qsbr *v)
{
	return rte_rcu_qsbr_start(v);
}

/* Waits until every reader online when `token` was taken has reported a
 * quiescent state since (or gone offline). */
void shim_rcu_qsbr_wait(struct rte_rcu_qsbr *v, uint64_t token)
{
	rte_rcu_qsbr_check(v, token, true);
}

uint64_t shim_rdtsc(void)
{
	return rte_rdtsc();
}

unsigned shim_lcore_id(void)
{
	return rte_lcore_id();
}

int shim_errno(void)
{
	return rte_errno;
}

uint32_t shim_hash_crc(const void *data, uint32_t len, uint32_t init)
{
	return rte_hash_crc(data, len, init);
}

const char *shim_mempool_ops_name(const struct rte_mempool *mp)
{
	return rte_mempool_get_ops(mp->ops_index)->name;
}

struct rte_mbuf *shim_pktmbuf_alloc(struct rte_mempool *mp)
{
	return rte_pktmbuf_alloc(mp);
}

char *shim_pktmbuf_append(struct rte_mbuf *m, uint16_t len)
{
	return rte_pktmbuf_append(m, len);
}

const uint64_t shim_rss_ip = RTE_ETH_RSS_IP;
const uint64_t shim_rss_l4 = RTE_ETH_RSS_UDP | RTE_ETH_RSS_TCP | RTE_ETH_RSS_SCTP;
const uint64_t shim_tx_offload_fast_free = RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE;
const uint64_t shim_tx_offload_multi_segs = RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
