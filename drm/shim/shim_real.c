// SPDX-License-Identifier: MIT
/*
 * The C library's own functions, behind our interposers.
 *
 * Looked up on first use rather than in a constructor: other libraries'
 * constructors, and the dynamic loader's own work, may open or close
 * files before ours has run.
 */
#include "shim.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

void *shim_real_lookup(void **slot, const char *name)
{
	void *fn = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	static const char msg[] = "ttmsim-drm-shim: a C library function is missing\n";

	if (fn)
		return fn;
	fn = dlsym(RTLD_NEXT, name);
	if (!fn) {
		/*
		 * Nothing to fall back on, and no way to report it to the
		 * caller of open() or ioctl(): say it the rawest way.
		 */
		if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
			_exit(127);
		_exit(127);
	}
	__atomic_store_n(slot, fn, __ATOMIC_RELEASE);
	return fn;
}
