/* SPDX-License-Identifier: MIT */
/* Linked with -Wl,--wrap=lpc_rcu_worker_ensure: each start of an lpc thread
 * calls a stub that does nothing and reports success, as before 0605786
 * (the *_nofix programs). */
int __wrap_lpc_rcu_worker_ensure(void);
int __wrap_lpc_rcu_worker_ensure(void)
{
	return 0;
}
