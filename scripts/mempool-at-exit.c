/*
 * Preloaded into a DPDK program, prints every mempool's objects in use when
 * it calls rte_eal_cleanup: how many mbufs it did not give back. This is how
 * C l3fwd's eventdev mode was found to leak at a stop (README, "Differences
 * from C l3fwd"):
 *
 *   gcc -shared -fPIC $(pkg-config --cflags libdpdk) scripts/mempool-at-exit.c \
 *       -o target/mempool-at-exit.so $(pkg-config --libs libdpdk) -ldl
 *   LD_PRELOAD=target/mempool-at-exit.so target/c-l3fwd/dpdk-l3fwd ...
 *
 * With pcap ports replaying their files (infinite_rx=1), the count includes
 * one mbuf per frame of the files, which the ports hold until the end.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <rte_mempool.h>

static void show(struct rte_mempool *mp, void *arg)
{
	(void)arg;
	fprintf(stderr, "mempool %s: %u in use at exit\n", mp->name, rte_mempool_in_use_count(mp));
}

int rte_eal_cleanup(void)
{
	int (*real)(void) = (int (*)(void))dlsym(RTLD_NEXT, "rte_eal_cleanup");

	rte_mempool_walk(show, NULL);
	return real();
}
