/* layout.c - where the shadow table's read-mostly fields sit in struct
 * lpc_pool: on the cache line of nactive (written by every promotion and
 * demotion) or not; and ws.clock's line (written per batch) against target
 * and the refault counters (written per refault). */
#include <stddef.h>
#include <stdio.h>
#include "cache/cache.h"
#define O(f) printf("%-28s offset %5zu line %4zu\n", #f, offsetof(struct lpc_pool, f), offsetof(struct lpc_pool, f) / 64)
int main(void)
{
	O(nactive); O(ws.shadow); O(ws.mask); O(ws.window); O(ws.live);
	O(ws.clock); O(ws.recent_all); O(ws.target); O(ws.refaults); O(ws.refaults_active);
	printf("sizeof(struct lpc_pool) %zu\n", sizeof(struct lpc_pool));
	return 0;
}
