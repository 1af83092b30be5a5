// SPDX-License-Identifier: MIT
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "ttmsim/ww_mutex.h"

static DEFINE_WW_CLASS(ww_smoke);
static DEFINE_WD_CLASS(wd_smoke);

static void test_basic(void **state)
{
	struct ww_class *cls = *state;
	struct ww_mutex m;
	struct ww_acquire_ctx ctx;

	ww_mutex_init(&m, cls);
	ww_acquire_init(&ctx, cls);
	assert_int_equal(ww_mutex_lock(&m, &ctx), 0);
	assert_int_equal(ww_mutex_lock(&m, &ctx), -EALREADY);
	assert_int_equal(ww_mutex_trylock(&m, &ctx), 0);
	assert_int_equal(ww_mutex_trylock(&m, NULL), 0);
	assert_ptr_equal(ww_mutex_owner_ctx(&m), &ctx);
	ww_mutex_unlock(&m);
	assert_false(ww_mutex_is_locked(&m));
	ww_acquire_fini(&ctx);
	assert_int_equal(ww_mutex_lock(&m, NULL), 0);
	ww_mutex_unlock(&m);
}

struct abba {
	struct ww_class *cls;
	struct ww_mutex a, b;
	pthread_barrier_t bar;
	int deadlks;
};

static void *abba_thread(void *arg)
{
	struct abba *s = arg;
	struct ww_acquire_ctx ctx;
	int i, ret;

	for (i = 0; i < 2000; i++) {
		ww_acquire_init(&ctx, s->cls);
		pthread_barrier_wait(&s->bar);
		ww_mutex_lock(&s->b, &ctx);
		ret = ww_mutex_lock(&s->a, &ctx);
		if (ret == -EDEADLK) {
			__atomic_fetch_add(&s->deadlks, 1, __ATOMIC_RELAXED);
			ww_mutex_unlock(&s->b);
			ww_mutex_lock_slow(&s->a, &ctx);
			ret = ww_mutex_lock(&s->b, &ctx);
		}
		assert_int_equal(ret, 0);
		ww_mutex_unlock(&s->a);
		ww_mutex_unlock(&s->b);
		ww_acquire_fini(&ctx);
	}
	return NULL;
}

static void test_abba(void **state)
{
	struct abba s = { .cls = *state };
	struct ww_acquire_ctx ctx;
	pthread_t t;
	int i, ret;

	ww_mutex_init(&s.a, s.cls);
	ww_mutex_init(&s.b, s.cls);
	pthread_barrier_init(&s.bar, NULL, 2);
	pthread_create(&t, NULL, abba_thread, &s);
	for (i = 0; i < 2000; i++) {
		ww_acquire_init(&ctx, s.cls);
		pthread_barrier_wait(&s.bar);
		ww_mutex_lock(&s.a, &ctx);
		ret = ww_mutex_lock(&s.b, &ctx);
		if (ret == -EDEADLK) {
			__atomic_fetch_add(&s.deadlks, 1, __ATOMIC_RELAXED);
			ww_mutex_unlock(&s.a);
			ww_mutex_lock_slow(&s.b, &ctx);
			ret = ww_mutex_lock(&s.a, &ctx);
		}
		assert_int_equal(ret, 0);
		ww_mutex_unlock(&s.a);
		ww_mutex_unlock(&s.b);
		ww_acquire_fini(&ctx);
	}
	pthread_join(t, NULL);
	print_message("%s: %d back-offs\n", s.cls->name, s.deadlks);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_prestate(test_basic, &ww_smoke),
		cmocka_unit_test_prestate(test_basic, &wd_smoke),
		cmocka_unit_test_prestate(test_abba, &ww_smoke),
		cmocka_unit_test_prestate(test_abba, &wd_smoke),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
