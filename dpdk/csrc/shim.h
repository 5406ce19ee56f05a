/*
 * Exported wrappers for DPDK's `static inline` functions, which bindgen
 * cannot link against. One call each per burst or per group, never per packet
 * on the fast path.
 */
#ifndef DPDK_SHIM_H
#define DPDK_SHIM_H

#include <stdint.h>

struct rte_mbuf;
struct rte_lpm;
struct rte_rcu_qsbr;

uint16_t shim_rx_burst(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n);
uint16_t shim_tx_burst(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n);
void shim_pktmbuf_free(struct rte_mbuf *m);
int shim_lpm_lookup_bulk(const struct rte_lpm *lpm, const uint32_t *ips, uint32_t *next_hops, unsigned n);
unsigned shim_lcore_id(void);
uint64_t shim_rdtsc(void);
int shim_errno(void);
uint32_t shim_hash_crc(const void *data, uint32_t len, uint32_t init);
struct rte_mempool;
const char *shim_mempool_ops_name(const struct rte_mempool *mp);
/* For tests: an mbuf of a pool, and bytes appended to it. */
struct rte_mbuf *shim_pktmbuf_alloc(struct rte_mempool *mp);
char *shim_pktmbuf_append(struct rte_mbuf *m, uint16_t len);

/* RCU QSBR: a reader's state changes (once per poll round, not per packet)
 * and the writer's grace-period token. */
void shim_rcu_qsbr_thread_online(struct rte_rcu_qsbr *v, unsigned thread_id);
void shim_rcu_qsbr_thread_offline(struct rte_rcu_qsbr *v, unsigned thread_id);
void shim_rcu_qsbr_quiescent(struct rte_rcu_qsbr *v, unsigned thread_id);
uint64_t shim_rcu_qsbr_start(struct rte_rcu_qsbr *v);
void shim_rcu_qsbr_wait(struct rte_rcu_qsbr *v, uint64_t token);

/* Function-like macros bindgen cannot evaluate. */
extern const uint64_t shim_rss_ip;
extern const uint64_t shim_rss_l4;
extern const uint64_t shim_tx_offload_fast_free;
extern const uint64_t shim_tx_offload_multi_segs;

#endif
