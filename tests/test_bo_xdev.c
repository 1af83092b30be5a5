// SPDX-License-Identifier: MIT
/*
 * Buffers of several devices: the reservation class devices share (the
 * kernel's reservation_ww_class), a transaction over two devices, the
 * Wound-Wait device's class of its own and -EXDEV for mixing classes, and
 * imports of another device's buffer (ttm_bo_import()).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "lib/bo_helpers.h"

#include "ttmsim/bo.h"
#include "ttmsim/exec.h"
#include "ttmsim/fence.h"
#include "ttmsim/resv.h"
#include "ttmsim/ww_debug.h"
#include "util/compiler.h"

static struct ttm_device *device(bool wound_wait)
{
	struct ttm_device_options opts = {
		.vram_size = 64 * KiB,
		.gtt_size = 64 * KiB,
		.wound_wait = wound_wait,
	};
	struct ttm_device *dev;

	assert_int_equal(ttm_device_create(&opts, &dev), 0);
	return dev;
}

static struct ttm_bo *buffer(struct ttm_device *dev)
{
	struct ttm_bo *bo;

	assert_int_equal(ttm_bo_create(dev, 4 * KiB, &vram_gtt, 0, &bo), 0);
	return bo;
}

/* ---- checker reports ------------------------------------------------ */

static struct {
	unsigned int count;
	enum ww_debug_rule rule;
	char class_name[64], ctx_class_name[64];
	const char *file;
	int line;
} seen;

static void keep_report(const struct ww_debug_report *r, void *data)
{
	(void)data;
	if (seen.count++)
		return;
	seen.rule = r->rule;
	snprintf(seen.class_name, sizeof(seen.class_name), "%s",
		 r->class_name ? r->class_name : "");
	snprintf(seen.ctx_class_name, sizeof(seen.ctx_class_name), "%s",
		 r->ctx_class_name ? r->ctx_class_name : "");
	seen.file = r->file;
	seen.line = r->line;
}

/* Reports on, to keep_report(); false if the checker is not built in. */
static bool watch_start(void)
{
	memset(&seen, 0, sizeof(seen));
	if (ww_debug_set_enabled(true) == -EOPNOTSUPP)
		return false;
	ww_debug_set_handler(keep_report, NULL);
	return true;
}

static void watch_stop(void)
{
	ww_debug_set_handler(NULL, NULL);
}

/* ---- classes ---------------------------------------------------------- */

/* Wait-Die devices share one class; each Wound-Wait device has its own. */
static void test_class_shared(void **state)
{
	struct ttm_device *a = device(false), *b = device(false);
	struct ttm_device *w1 = device(true), *w2 = device(true);
	struct ww_class *ca = ttm_device_ww_class(a);

	(void)state;
	assert_ptr_equal(ca, ttm_device_ww_class(b));
	assert_true(ca->is_wait_die);
	assert_string_equal(ca->name, "reservation_ww_class");
	assert_ptr_not_equal(ttm_device_ww_class(w1), ca);
	assert_ptr_not_equal(ttm_device_ww_class(w1), ttm_device_ww_class(w2));
	assert_false(ttm_device_ww_class(w1)->is_wait_die);
	/* Reports must tell the families apart by name. */
	assert_string_not_equal(ttm_device_ww_class(w1)->name, ca->name);
	assert_string_not_equal(ttm_device_ww_class(w1)->name,
				ttm_device_ww_class(w2)->name);
	ttm_device_destroy(a);
	ttm_device_destroy(b);
	ttm_device_destroy(w1);
	ttm_device_destroy(w2);
}

/* One ticket locks and fences buffers of two devices. */
static void test_xdev_transaction(void **state)
{
	struct ttm_device *a = device(false), *b = device(false);
	struct ttm_bo *ba = buffer(a), *bb = buffer(b);
	struct ttm_fence *f;
	struct ttm_exec exec;
	struct ttm_bo *bo;
	unsigned int i, n = 0;
	int ret = 0;

	(void)state;
	assert_int_equal(ttm_fence_create(ttm_fence_context_alloc(1), 1, &f),
			 0);
	ttm_exec_init(&exec, a, 0);
	ttm_exec_until_all_locked(&exec) {
		ret = ttm_exec_prepare_bo(&exec, ba, 1);
		ttm_exec_retry_on_contention(&exec);
		if (ret)
			break;
		ret = ttm_exec_prepare_bo(&exec, bb, 1);
		ttm_exec_retry_on_contention(&exec);
		if (ret)
			break;
	}
	assert_int_equal(ret, 0);
	ttm_exec_for_each_locked_bo(&exec, i, bo) {
		ttm_resv_add_fence(ttm_bo_resv(bo), f, TTM_RESV_USAGE_WRITE);
		n++;
	}
	assert_int_equal(n, 2);
	ttm_exec_fini(&exec);
	assert_false(ttm_resv_test_signaled(ttm_bo_resv(ba),
					    TTM_RESV_USAGE_READ));
	assert_false(ttm_resv_test_signaled(ttm_bo_resv(bb),
					    TTM_RESV_USAGE_READ));
	assert_int_equal(ttm_fence_signal(f, 0), 0);
	assert_true(ttm_resv_test_signaled(ttm_bo_resv(bb),
					   TTM_RESV_USAGE_READ));
	ttm_fence_put(f);
	ttm_bo_put(ba);
	ttm_bo_put(bb);
	assert_int_equal(ttm_device_destroy(a), 0);
	assert_int_equal(ttm_device_destroy(b), 0);
}

/*
 * Two threads lock one buffer of each device in opposite orders, each
 * with a ticket of its own device: only one class ordering both tickets
 * lets the younger back off instead of both waiting forever.
 */
struct crosser {
	struct ttm_device *dev;
	struct ttm_bo *first, *second;
	pthread_barrier_t *start;
	unsigned int rounds;
	unsigned int *inside;   /* holders of both, at most 1 */
	unsigned long *progress;
	bool overlap;
};

#define CROSS_ROUNDS 2000

static void *crosser_main(void *arg)
{
	struct crosser *c = arg;
	struct ttm_exec exec;
	unsigned int i;
	int ret = 0;

	pthread_barrier_wait(c->start);
	for (i = 0; i < c->rounds; i++) {
		ttm_exec_init(&exec, c->dev, 0);
		ttm_exec_until_all_locked(&exec) {
			ret = ttm_exec_lock_bo(&exec, c->first);
			ttm_exec_retry_on_contention(&exec);
			if (ret)
				break;
			ret = ttm_exec_lock_bo(&exec, c->second);
			ttm_exec_retry_on_contention(&exec);
			if (ret)
				break;
		}
		if (ret) {
			ttm_exec_fini(&exec);
			break;
		}
		if (__atomic_add_fetch(c->inside, 1, __ATOMIC_ACQ_REL) != 1)
			c->overlap = true;
		__atomic_sub_fetch(c->inside, 1, __ATOMIC_ACQ_REL);
		ttm_exec_fini(&exec);
		__atomic_add_fetch(c->progress, 1, __ATOMIC_RELAXED);
	}
	return (void *)(intptr_t)ret;
}

static void crossers_stalled(void *arg)
{
	(void)arg;
	fprintf(stderr, "cross-device locking: no round done in 30 s: the "
		"two tickets wait for each other\n");
}

static void test_xdev_contention(void **state)
{
	struct ttm_device *a = device(false), *b = device(false);
	struct ttm_bo *ba = buffer(a), *bb = buffer(b);
	pthread_barrier_t start;
	unsigned int inside = 0;
	unsigned long progress = 0;
	struct crosser c[2] = {
		{ a, ba, bb, &start, CROSS_ROUNDS, &inside, &progress, false },
		{ b, bb, ba, &start, CROSS_ROUNDS, &inside, &progress, false },
	};
	struct progress_watchdog wd = {
		.progress = &progress,
		.limit_s = 30,
		.stalled = crossers_stalled,
	};
	pthread_t t[2];
	void *ret;
	int i;

	(void)state;
	pthread_barrier_init(&start, NULL, 2);
	progress_watchdog_start(&wd);
	for (i = 0; i < 2; i++)
		t[i] = start_thread(crosser_main, &c[i]);
	for (i = 0; i < 2; i++) {
		assert_int_equal(pthread_join(t[i], &ret), 0);
		assert_int_equal((int)(intptr_t)ret, 0);
		assert_false(c[i].overlap);
	}
	progress_watchdog_stop(&wd);
	pthread_barrier_destroy(&start);
	ttm_bo_put(ba);
	ttm_bo_put(bb);
	ttm_device_destroy(a);
	ttm_device_destroy(b);
}

/* A ticket of the shared class on a Wound-Wait device's buffer: -EXDEV. */
static void test_mixed_classes(void **state)
{
	struct ttm_device *a = device(false), *w = device(true);
	struct ttm_bo *ba = buffer(a), *bw = buffer(w);
	struct ttm_exec exec;
	bool checker;
	int line, ret;

	(void)state;
	checker = watch_start();
	ttm_exec_init(&exec, a, 0);
	assert_int_equal(ttm_exec_lock_bo(&exec, ba), 0);
	line = __LINE__ + 1;
	ret = ttm_exec_lock_bo(&exec, bw);
	assert_int_equal(ret, -EXDEV);
	assert_false(ww_mutex_is_locked(&ttm_bo_resv(bw)->lock));
	assert_int_equal(ttm_exec_count(&exec), 1);
	/* The plain reserve says the same, and takes nothing either. */
	assert_int_equal(ttm_bo_reserve(bw, false, false, &exec.ticket),
			 -EXDEV);
	assert_false(ww_mutex_is_locked(&ttm_bo_resv(bw)->lock));
	ttm_exec_fini(&exec);
	watch_stop();

	if (checker) {
		assert_int_equal(seen.count, 2);
		assert_int_equal(seen.rule, WW_DEBUG_CLASS_MISMATCH);
		assert_string_equal(seen.class_name,
				    ttm_device_ww_class(w)->name);
		assert_string_equal(seen.ctx_class_name,
				    "reservation_ww_class");
		assert_non_null(seen.file);
		assert_non_null(strstr(seen.file, "test_bo_xdev.c"));
		assert_int_equal(seen.line, line);
	}
	ttm_bo_put(ba);
	ttm_bo_put(bw);
	ttm_device_destroy(a);
	ttm_device_destroy(w);
}

/* With the checker off, mixing is refused all the same, silently. */
static void test_mixed_classes_unchecked(void **state)
{
	struct ttm_device *a = device(false), *w = device(true);
	struct ttm_bo *bw = buffer(w);
	bool was = checker_off();
	struct ww_acquire_ctx ticket;

	(void)state;
	memset(&seen, 0, sizeof(seen));
	ww_debug_set_handler(keep_report, NULL);
	ww_acquire_init(&ticket, ttm_device_ww_class(a));
	assert_int_equal(ttm_bo_reserve(bw, true, false, &ticket), -EXDEV);
	assert_false(ww_mutex_is_locked(&ttm_bo_resv(bw)->lock));
	ww_acquire_fini(&ticket);
	watch_stop();
	checker_restore(was);
	assert_int_equal(seen.count, 0);
	ttm_bo_put(bw);
	ttm_device_destroy(a);
	ttm_device_destroy(w);
}

static void free_destroy(struct ttm_bo *bo)
{
	free(bo);
}

/* A new buffer joins neither a ticket nor a reservation of another class. */
static void test_init_reserved_mixed(void **state)
{
	struct ttm_device *a = device(false), *w = device(true);
	struct ttm_bo *bo = calloc(1, sizeof(*bo)), *bw = buffer(w);
	struct ww_acquire_ctx ticket;
	bool checker;

	(void)state;
	assert_non_null(bo);
	ww_acquire_init(&ticket, ttm_device_ww_class(a));
	checker = watch_start();
	assert_int_equal(ttm_bo_init_reserved(w, bo, TTM_BO_TYPE_KERNEL,
					      4 * KiB, &vram_gtt, NULL,
					      &ticket, NULL, free_destroy),
			 -EXDEV);
	watch_stop();
	ww_acquire_fini(&ticket);
	if (checker) {
		assert_int_equal(seen.count, 1);
		assert_int_equal(seen.rule, WW_DEBUG_CLASS_MISMATCH);
		assert_string_equal(seen.class_name,
				    ttm_device_ww_class(w)->name);
		assert_string_equal(seen.ctx_class_name,
				    ttm_device_ww_class(a)->name);
	}

	/* @w's reservation, shared into a buffer of @a. */
	assert_int_equal(ttm_bo_reserve(bw, false, false, NULL), 0);
	assert_int_equal(ttm_bo_init_reserved(a, bo, TTM_BO_TYPE_KERNEL,
					      4 * KiB, &vram_gtt, NULL, NULL,
					      ttm_bo_resv(bw), free_destroy),
			 -EXDEV);
	ttm_bo_unreserve(bw);
	free(bo);
	ttm_bo_put(bw);
	assert_int_equal(ttm_device_destroy(a), 0);
	assert_int_equal(ttm_device_destroy(w), 0);
}

/* ---- imports ---------------------------------------------------------- */

static uint64_t dev_buffers(struct ttm_device *dev, int domain)
{
	struct ttm_device_stats st;

	ttm_device_get_stats(dev, &st);
	return domain < 0 ? st.buffers : st.domain[domain].buffers;
}

/* What an import is, and what comes back as it is. */
static void test_import_kinds(void **state)
{
	struct ttm_device *a = device(false), *b = device(false);
	struct ttm_device *w = device(true);
	struct ttm_bo *x = buffer(a), *y, *z, *same, *k = calloc(1, sizeof(*k));

	(void)state;
	assert_int_equal(ttm_bo_import(b, x, &y), 0);
	assert_ptr_not_equal(y, x);
	assert_int_equal(ttm_bo_type(y), TTM_BO_TYPE_SG);
	assert_ptr_equal(ttm_bo_device(y), b);
	assert_ptr_equal(ttm_bo_resv(y), ttm_bo_resv(x));
	assert_ptr_equal(ttm_bo_exporter(y), x);
	assert_ptr_equal(ttm_bo_exporter(x), x);
	assert_int_equal(ttm_bo_domain(y), TTM_DOMAIN_SYSTEM);
	assert_int_equal(dev_buffers(b, TTM_DOMAIN_SYSTEM), 1);
	assert_int_equal(dev_buffers(b, TTM_DOMAIN_VRAM), 0);
	assert_dev_ok(b);

	/* Once per device while it lives. */
	assert_int_equal(ttm_bo_import(b, x, &same), 0);
	assert_ptr_equal(same, y);
	ttm_bo_put(same);
	/* Its own buffer, and an import of its own buffer, come back. */
	assert_int_equal(ttm_bo_import(a, x, &same), 0);
	assert_ptr_equal(same, x);
	ttm_bo_put(same);
	assert_int_equal(ttm_bo_import(a, y, &same), 0);
	assert_ptr_equal(same, x);
	ttm_bo_put(same);
	/* An import of an import is an import of the exporter's buffer. */
	assert_int_equal(ttm_bo_import(w, y, &z), -EXDEV);
	{
		struct ttm_device *c = device(false);

		assert_int_equal(ttm_bo_import(c, y, &z), 0);
		assert_ptr_equal(ttm_bo_exporter(z), x);
		ttm_bo_put(z);
		assert_int_equal(ttm_device_destroy(c), 0);
	}
	/* A driver's own buffer is never shared. */
	assert_non_null(k);
	assert_int_equal(ttm_bo_init_reserved(a, k, TTM_BO_TYPE_KERNEL,
					      4 * KiB, &vram_gtt, NULL, NULL,
					      NULL, free_destroy), 0);
	ttm_bo_unreserve(k);
	assert_int_equal(ttm_bo_import(b, k, &z), -EINVAL);
	ttm_bo_put(k);

	/* The import keeps the exporter's buffer alive. */
	ttm_bo_put(x);
	assert_int_equal(dev_buffers(a, -1), 1);
	ttm_bo_put(y);
	assert_int_equal(dev_buffers(a, -1), 0);
	assert_int_equal(dev_buffers(b, -1), 0);
	assert_int_equal(ttm_device_destroy(a), 0);
	assert_int_equal(ttm_device_destroy(b), 0);
	assert_int_equal(ttm_device_destroy(w), 0);
}

/*
 * The import shows the exporter's pages wherever the exporter moves, and
 * its own device never moves it.
 */
static void test_import_follows_exporter(void **state)
{
	struct ttm_device *a = device(false), *b = device(false);
	struct ttm_bo *x = buffer(a), *y;
	struct ttm_operation_ctx ctx = { 0 };
	struct ttm_gpu_range rx, ry;
	uint32_t word = 0xfeedf00d, back = 0;

	(void)state;
	assert_int_equal(ttm_bo_domain(x), TTM_DOMAIN_VRAM);
	assert_int_equal(ttm_bo_import(b, x, &y), 0);
	assert_int_equal(ttm_bo_reserve(y, false, false, NULL), 0);
	/* Holding the import's reservation is holding the exporter's. */
	assert_true(ww_mutex_is_locked(&ttm_bo_resv(x)->lock));
	assert_int_equal(ttm_bo_write(y, 4, &word, sizeof(word)), 0);
	/* Any placement: nothing moves on the importer's side. */
	assert_int_equal(ttm_bo_validate(y, &vram_only, &ctx), 0);
	assert_int_equal(ttm_bo_domain(y), TTM_DOMAIN_SYSTEM);
	assert_int_equal(dev_buffers(b, TTM_DOMAIN_VRAM), 0);
	/* The exporter moves (the reservation is held): the pages follow. */
	assert_int_equal(ttm_bo_validate(x, &gtt_only, &ctx), 0);
	assert_int_equal(ttm_bo_domain(x), TTM_DOMAIN_GTT);
	ttm_bo_gpu_range(x, &rx);
	ttm_bo_gpu_range(y, &ry);
	assert_ptr_equal(rx.addr, ry.addr);
	assert_int_equal(ry.size, ttm_bo_size(x));
	assert_int_equal(ttm_bo_read(y, 4, &back, sizeof(back)), 0);
	assert_int_equal(back, word);
	ttm_bo_unreserve(y);
	assert_dev_ok(a);
	assert_dev_ok(b);
	ttm_bo_put(y);
	ttm_bo_put(x);
	assert_int_equal(ttm_device_destroy(a), 0);
	assert_int_equal(ttm_device_destroy(b), 0);
}

/*
 * Fences are shared both ways; a busy import released drops the exporter
 * at once, and both wait for the import's work on their own device.
 */
static void test_import_busy_release(void **state)
{
	struct ttm_device *a = device(false), *b = device(false);
	struct ttm_bo *x = buffer(a), *y;
	struct ttm_fence *f;
	struct ttm_device_stats st;

	(void)state;
	assert_int_equal(ttm_bo_import(b, x, &y), 0);
	/* The importer's job... */
	f = busy_fence(y);
	/* ...is what the exporter's users wait for. */
	assert_false(ttm_resv_test_signaled(ttm_bo_resv(x),
					    TTM_RESV_USAGE_READ));

	ttm_bo_put(y);
	ttm_bo_put(x);
	/* Both wait for the import's work, each on its own device. */
	ttm_device_get_stats(b, &st);
	assert_int_equal(st.zombies, 1);
	ttm_device_get_stats(a, &st);
	assert_int_equal(st.zombies, 1);
	assert_int_equal(ttm_fence_signal(f, 0), 0);
	ttm_fence_put(f);
	ttm_device_flush_destroys(b);
	ttm_device_flush_destroys(a);
	assert_int_equal(dev_buffers(b, -1), 0);
	assert_int_equal(dev_buffers(a, -1), 0);
	assert_int_equal(ttm_device_destroy(b), 0);
	assert_int_equal(ttm_device_destroy(a), 0);
}

/*
 * A busy import's last put lets the exporter go at once: the exporter
 * waits for the import's work as a zombie of its own device, which can
 * then be destroyed before the importer's.
 */
static void test_import_release_order(void **state)
{
	struct ttm_device *a = device(false), *b = device(false);
	struct ttm_bo *x = buffer(a), *y;
	struct ttm_device_stats st;
	struct ttm_fence *f;

	(void)state;
	assert_int_equal(ttm_bo_import(b, x, &y), 0);
	f = busy_fence(y);
	ttm_bo_put(y);
	ttm_bo_put(x);
	/* Nothing of @a is held by a caller: only fences keep x. */
	ttm_device_get_stats(a, &st);
	assert_int_equal(st.buffers, 1);
	assert_int_equal(st.zombies, 1);
	assert_int_equal(ttm_fence_signal(f, 0), 0);
	ttm_fence_put(f);
	assert_int_equal(ttm_device_destroy(a), 0);
	assert_int_equal(ttm_device_destroy(b), 0);
}

/* Pinning an import pins the exporter's pages where they are. */
static void test_import_pin(void **state)
{
	struct ttm_device *a = device(false), *b = device(false);
	struct ttm_bo *x = buffer(a), *y;
	struct ttm_operation_ctx ctx = { 0 };

	(void)state;
	assert_int_equal(ttm_bo_import(b, x, &y), 0);
	assert_int_equal(ttm_bo_reserve(y, false, false, NULL), 0);
	assert_int_equal(ttm_bo_pin(y), 0);
	assert_int_equal(ttm_bo_pin_count(x), 1);
	/* The exporter stays in VRAM, as any pinned buffer. */
	assert_int_equal(ttm_bo_validate(x, &gtt_only, &ctx), -EINVAL);
	assert_int_equal(ttm_bo_domain(x), TTM_DOMAIN_VRAM);
	assert_int_equal(ttm_bo_unpin(y), 0);
	assert_int_equal(ttm_bo_pin_count(x), 0);
	assert_int_equal(ttm_bo_validate(x, &gtt_only, &ctx), 0);
	ttm_bo_unreserve(y);
	assert_dev_ok(a);
	ttm_bo_put(y);
	ttm_bo_put(x);
	assert_int_equal(ttm_device_destroy(a), 0);
	assert_int_equal(ttm_device_destroy(b), 0);
}

/*
 * A ticket never initialised (zeroed) is the ww calls' to report, not a
 * class mismatch: no crash in the class check.
 */
static void test_zeroed_ticket(void **state)
{
	struct ttm_device *a = device(false);
	struct ttm_bo *x = buffer(a);
	struct ww_acquire_ctx ticket;
	bool checker = watch_start();
	int ret;

	(void)state;
	memset(&ticket, 0, sizeof(ticket));
	ret = ttm_bo_reserve(x, false, false, &ticket);
	watch_stop();
	if (checker) {
		assert_int_equal(seen.count, 1);
		assert_int_not_equal(seen.rule, WW_DEBUG_CLASS_MISMATCH);
		assert_int_equal(ret, -EINVAL);
	}
	if (ret == 0)
		ttm_bo_unreserve(x);
	ttm_bo_put(x);
	assert_int_equal(ttm_device_destroy(a), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_class_shared),
		cmocka_unit_test(test_xdev_transaction),
		cmocka_unit_test(test_xdev_contention),
		cmocka_unit_test(test_mixed_classes),
		cmocka_unit_test(test_mixed_classes_unchecked),
		cmocka_unit_test(test_init_reserved_mixed),
		cmocka_unit_test(test_import_kinds),
		cmocka_unit_test(test_import_follows_exporter),
		cmocka_unit_test(test_import_busy_release),
		cmocka_unit_test(test_import_release_order),
		cmocka_unit_test(test_import_pin),
		cmocka_unit_test(test_zeroed_ticket),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
