#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_NEXT */
#endif
/* rte_event_port_quiesce is experimental in 22.11; C l3fwd uses it too. */
#define ALLOW_EXPERIMENTAL_API 1
#include <dlfcn.h>
#include <stdlib.h>

#include <rte_ethdev.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_hash_crc.h>
#include <rte_lcore.h>
#include <rte_lpm.h>
#include <rte_mbuf.h>
#include <rte_malloc.h>
#include <rte_rcu_qsbr.h>
#include <rte_eventdev.h>
#include <rte_event_eth_rx_adapter.h>
#include <rte_event_eth_tx_adapter.h>

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

/* Whether every reader online when `token` was taken has reported a
 * quiescent state since (or gone offline), without waiting. */
int shim_rcu_qsbr_passed(struct rte_rcu_qsbr *v, uint64_t token)
{
	return rte_rcu_qsbr_check(v, token, false);
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

void shim_clear_errno(void)
{
	rte_errno = 0;
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

uint16_t shim_event_dequeue_burst(uint8_t dev, uint8_t port, struct rte_event *ev, uint16_t n)
{
	return rte_event_dequeue_burst(dev, port, ev, n, 0);
}

uint16_t shim_event_enqueue_burst(uint8_t dev, uint8_t port, const struct rte_event *ev, uint16_t n)
{
	return rte_event_enqueue_burst(dev, port, ev, n);
}

uint16_t shim_event_tx_adapter_enqueue(uint8_t dev, uint8_t port, struct rte_event *ev, uint16_t n)
{
	return rte_event_eth_tx_adapter_enqueue(dev, port, ev, n, 0);
}

void shim_event_to_tx(struct rte_event *ev, uint16_t eth_port, int tx_event_queue)
{
	ev->mbuf->port = eth_port;
	rte_event_eth_tx_adapter_txq_set(ev->mbuf, 0);
	ev->op = RTE_EVENT_OP_FORWARD;
	if (tx_event_queue >= 0)
		ev->queue_id = (uint8_t)tx_event_queue;
}

void shim_event_release(struct rte_event *ev)
{
	ev->op = RTE_EVENT_OP_RELEASE;
}

/* Frees what an event carries: its mbuf, or its vector's mbufs and the
 * vector (back to its pool). */
void shim_event_free(const struct rte_event *ev)
{
	if (ev->event_type & RTE_EVENT_TYPE_VECTOR) {
		struct rte_event_vector *vec = ev->vec;

		rte_pktmbuf_free_bulk(&vec->mbufs[vec->elem_offset], vec->nb_elem);
		rte_mempool_put(rte_mempool_from_obj(vec), vec);
	} else {
		rte_pktmbuf_free(ev->mbuf);
	}
}

int shim_event_is_vector(const struct rte_event *ev)
{
	return (ev->event_type & RTE_EVENT_TYPE_VECTOR) != 0;
}

struct rte_mbuf **shim_vector_mbufs(struct rte_event_vector *vec)
{
	return &vec->mbufs[vec->elem_offset];
}

uint16_t shim_vector_len(const struct rte_event_vector *vec)
{
	return vec->nb_elem;
}

void shim_vector_put(struct rte_event_vector *vec)
{
	rte_mempool_put(rte_mempool_from_obj(vec), vec);
}

void shim_mbuf_to_tx(struct rte_mbuf *m, uint16_t eth_port)
{
	m->port = eth_port;
	rte_event_eth_tx_adapter_txq_set(m, 0);
}

void shim_vector_event_to_tx(struct rte_event *ev, uint16_t nb_elem, int tx_event_queue)
{
	ev->vec->nb_elem = nb_elem;
	ev->vec->attr_valid = 0;
	ev->op = RTE_EVENT_OP_FORWARD;
	if (tx_event_queue >= 0)
		ev->queue_id = (uint8_t)tx_event_queue;
}

/* Frees what an event a port or the device still held carries. */
static void free_event(uint8_t dev, struct rte_event ev, void *freed)
{
	(void)dev;
	shim_event_free(&ev);
	++*(uint64_t *)freed;
}

void shim_event_port_quiesce(uint8_t dev, uint8_t port, uint64_t *freed)
{
	rte_event_port_quiesce(dev, port, free_event, freed);
}

int shim_event_dev_free_on_stop(uint8_t dev, uint64_t *freed)
{
	return rte_event_dev_stop_flush_callback_register(dev, free_event, freed);
}

/* Once *closed is set, frees what the RX queue brings, before the RX
 * adapter sees it: no new event (nor vector) is made from then on, while
 * the adapter flushes what it holds. */
static uint16_t drop_when_closed(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n,
				 uint16_t max, void *arg)
{
	const struct shim_drop_when *d = arg;

	(void)port, (void)queue, (void)max;
	if (n == 0 || !__atomic_load_n(d->closed, __ATOMIC_RELAXED))
		return n;
	rte_pktmbuf_free_bulk(pkts, n);
	__atomic_fetch_add(d->dropped, n, __ATOMIC_RELAXED);
	return 0;
}

const void *shim_rx_drop_when(uint16_t eth_port, uint16_t queue, const struct shim_drop_when *d)
{
	return rte_eth_add_rx_callback(eth_port, queue, drop_when_closed, (void *)d);
}

/* Before DPDK 25.11 ("pdump: fix races in callbacks"), DPDK's packet
 * capture removes its RX and TX callbacks and answers dpdk-dumpcap at once;
 * the tool then frees the mempool the callbacks copy into, while an lcore
 * may still be inside one: the forwarder died of SIGSEGV in
 * rte_pktmbuf_copy at the end of a capture. The two definitions below take
 * ethdev's place for librte_pdump (the dynamic linker looks in the
 * executable first) and, once a callback is removed, run the grace hook
 * l3fwd-rs sets, which returns when no lcore can still be running it. */
static void (*callback_grace)(void);

void shim_set_callback_grace(void (*grace)(void))
{
	__atomic_store_n(&callback_grace, grace, __ATOMIC_RELEASE);
}

typedef int remove_callback_fn(uint16_t, uint16_t, const struct rte_eth_rxtx_callback *);

/* ethdev's own function of `name`, past the definitions below. */
static remove_callback_fn *ethdev_remove(const char *name)
{
	return (remove_callback_fn *)dlsym(RTLD_NEXT, name);
}

#if RTE_VERSION < RTE_VERSION_NUM(25, 11, 0, 0)
static int remove_then_wait(const char *name, uint16_t port, uint16_t queue,
			    const struct rte_eth_rxtx_callback *cb)
{
	remove_callback_fn *remove = ethdev_remove(name);
	if (remove == NULL)
		return -ENOTSUP;
	int ret = remove(port, queue, cb);
	void (*grace)(void) = __atomic_load_n(&callback_grace, __ATOMIC_ACQUIRE);
	if (ret == 0 && grace != NULL)
		grace();
	return ret;
}

int rte_eth_remove_rx_callback(uint16_t port_id, uint16_t queue_id,
			       const struct rte_eth_rxtx_callback *user_cb)
{
	return remove_then_wait("rte_eth_remove_rx_callback", port_id, queue_id, user_cb);
}

int rte_eth_remove_tx_callback(uint16_t port_id, uint16_t queue_id,
			       const struct rte_eth_rxtx_callback *user_cb)
{
	return remove_then_wait("rte_eth_remove_tx_callback", port_id, queue_id, user_cb);
}
#endif

/* ethdev's removal, without the grace: the adapter's queues stopped
 * before this runs. */
void shim_rx_drop_when_remove(uint16_t eth_port, uint16_t queue, const void *cb)
{
	remove_callback_fn *remove = ethdev_remove("rte_eth_remove_rx_callback");
	if (remove != NULL && remove(eth_port, queue, cb) == 0)
		rte_free((void *)cb);
}

const uint64_t shim_rss_ip = RTE_ETH_RSS_IP;
const uint64_t shim_rss_l4 = RTE_ETH_RSS_UDP | RTE_ETH_RSS_TCP | RTE_ETH_RSS_SCTP;
const uint64_t shim_tx_offload_fast_free = RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE;
const uint64_t shim_tx_offload_multi_segs = RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
const uint32_t shim_link_speed_fixed = RTE_ETH_LINK_SPEED_FIXED;
const uint32_t shim_event_dev_cap_queue_all_types = RTE_EVENT_DEV_CAP_QUEUE_ALL_TYPES;
const uint32_t shim_event_dev_cap_burst_mode = RTE_EVENT_DEV_CAP_BURST_MODE;
const uint32_t shim_event_dev_cap_distributed_sched = RTE_EVENT_DEV_CAP_DISTRIBUTED_SCHED;
#if RTE_VERSION >= RTE_VERSION_NUM(24, 11, 0, 0)
const uint32_t shim_event_dev_cap_preschedule = RTE_EVENT_DEV_CAP_EVENT_PRESCHEDULE;
const uint32_t shim_event_dev_cap_preschedule_adaptive = RTE_EVENT_DEV_CAP_EVENT_PRESCHEDULE_ADAPTIVE;
#endif
const uint32_t shim_event_queue_cfg_all_types = RTE_EVENT_QUEUE_CFG_ALL_TYPES;
const uint32_t shim_event_queue_cfg_single_link = RTE_EVENT_QUEUE_CFG_SINGLE_LINK;

/* atexit(3), which bindgen does not reach through the DPDK headers. */
int shim_atexit(void (*fn)(void))
{
	return atexit(fn);
}
