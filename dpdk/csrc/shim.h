/*
 * Exported wrappers for DPDK's `static inline` functions, which bindgen
 * cannot link against. One call each per burst or per group, never per packet
 * on the fast path.
 */
#ifndef DPDK_SHIM_H
#define DPDK_SHIM_H

#include <stdint.h>

#include <rte_version.h>

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
void shim_clear_errno(void);
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
int shim_rcu_qsbr_passed(struct rte_rcu_qsbr *v, uint64_t token);
struct rte_event;
uint16_t shim_event_dequeue_burst(uint8_t dev, uint8_t port, struct rte_event *ev, uint16_t n);
uint16_t shim_event_enqueue_burst(uint8_t dev, uint8_t port, const struct rte_event *ev, uint16_t n);
uint16_t shim_event_tx_adapter_enqueue(uint8_t dev, uint8_t port, struct rte_event *ev, uint16_t n);
/* Readies a dequeued event for the TX adapter: the mbuf's port and TX
 * queue 0, op FORWARD, and (tx_event_queue >= 0) the TX adapter's queue. */
void shim_event_to_tx(struct rte_event *ev, uint16_t eth_port, int tx_event_queue);
void shim_event_release(struct rte_event *ev);
/* Frees what an event carries: its mbuf, or its vector's mbufs and the
 * vector itself. */
void shim_event_free(const struct rte_event *ev);
int shim_event_is_vector(const struct rte_event *ev);
/* A vector's valid mbufs (from its offset on), their number; the vector
 * back to its pool. */
struct rte_event_vector;
struct rte_mbuf **shim_vector_mbufs(struct rte_event_vector *vec);
uint16_t shim_vector_len(const struct rte_event_vector *vec);
void shim_vector_put(struct rte_event_vector *vec);
/* The mbuf's port and TX queue 0, for the TX adapter. */
void shim_mbuf_to_tx(struct rte_mbuf *m, uint16_t eth_port);
/* Readies a dequeued vector event for the TX adapter: its first nb_elem
 * mbufs (each with its port and TX queue), op FORWARD, and
 * (tx_event_queue >= 0) the TX adapter's queue. */
void shim_vector_event_to_tx(struct rte_event *ev, uint16_t nb_elem, int tx_event_queue);
/* Free the events a port (quiesce) or a stopping device still holds,
 * counting them into *freed. */
void shim_event_port_quiesce(uint8_t dev, uint8_t port, uint64_t *freed);
int shim_event_dev_free_on_stop(uint8_t dev, uint64_t *freed);
/* An RX queue callback that, once *closed (a flag another thread sets) is
 * non-zero, frees what the queue brings and counts it into *dropped. */
struct shim_drop_when {
	const uint8_t *closed;
	uint64_t *dropped;
};
const void *shim_rx_drop_when(uint16_t eth_port, uint16_t queue, const struct shim_drop_when *d);
/* Removes it (the queue's poller stopped) and frees DPDK's record of it. */
void shim_rx_drop_when_remove(uint16_t eth_port, uint16_t queue, const void *cb);

/* The hook run after DPDK's packet capture removes one of its callbacks,
 * before the tool that asked hears back (DPDK before 25.11; see shim.c). */
void shim_set_callback_grace(void (*grace)(void));

/* Function-like macros bindgen cannot evaluate. */
extern const uint64_t shim_rss_ip;
extern const uint64_t shim_rss_l4;
extern const uint64_t shim_tx_offload_fast_free;
extern const uint64_t shim_tx_offload_multi_segs;
extern const uint32_t shim_link_speed_fixed;
/* RTE_BIT32 since 24.11, which bindgen drops. */
extern const uint32_t shim_event_dev_cap_queue_all_types;
extern const uint32_t shim_event_dev_cap_burst_mode;
extern const uint32_t shim_event_dev_cap_distributed_sched;
#if RTE_VERSION >= RTE_VERSION_NUM(24, 11, 0, 0)
/* Event pre-scheduling, 24.11. */
extern const uint32_t shim_event_dev_cap_preschedule;
extern const uint32_t shim_event_dev_cap_preschedule_adaptive;
#endif
/* atexit(3). */
int shim_atexit(void (*fn)(void));
extern const uint32_t shim_event_queue_cfg_all_types;
extern const uint32_t shim_event_queue_cfg_single_link;

#endif
