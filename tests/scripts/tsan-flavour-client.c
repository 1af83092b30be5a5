/*
 * A driver-like program for the tsan-flavour test: two threads take the
 * same two ww mutexes in opposite orders (so they back off on -EDEADLK)
 * and update plain, unsynchronised data under them. The only thing that
 * orders those updates is the library's lock word: ThreadSanitizer sees
 * it only in the instrumented libttmsim-tsan.so. (Against the plain
 * library it may report a race on `counter`, unless a pthread call the
 * library makes, which TSan intercepts anyway, happens to order them.)
 */
#include <pthread.h>
#include <stdio.h>
#include <ttmsim/ww_mutex.h>

#define ROUNDS 2000

static DEFINE_WW_CLASS(client_class);
static struct ww_mutex locks[2];
static pthread_barrier_t start;
static unsigned long counter;	/* written under both locks only */
static unsigned long backoffs[2];

/* Lock both, first @first, with the back-off loop every driver has. */
static void lock_both(int first, struct ww_acquire_ctx *ctx,
		      unsigned long *nbackoffs)
{
	struct ww_mutex *a = &locks[first], *b = &locks[!first];

	ww_acquire_init(ctx, &client_class);
	if (ww_mutex_lock(a, ctx) == -EDEADLK) {
		ww_mutex_lock_slow(a, ctx);
		++*nbackoffs;
	}
	while (ww_mutex_lock(b, ctx) == -EDEADLK) {
		struct ww_mutex *t;

		ww_mutex_unlock(a);
		ww_mutex_lock_slow(b, ctx);
		++*nbackoffs;
		t = a;
		a = b;
		b = t;
	}
	ww_acquire_done(ctx);
}

static void *worker(void *arg)
{
	int id = (int)(long)arg;
	struct ww_acquire_ctx ctx;

	pthread_barrier_wait(&start);
	for (int i = 0; i < ROUNDS; i++) {
		lock_both(id, &ctx, &backoffs[id]);
		counter++;
		ww_mutex_unlock(&locks[0]);
		ww_mutex_unlock(&locks[1]);
		ww_acquire_fini(&ctx);
	}
	return NULL;
}

int main(void)
{
	pthread_t t[2];

	ww_mutex_init(&locks[0], &client_class);
	ww_mutex_init(&locks[1], &client_class);
	pthread_barrier_init(&start, NULL, 2);
	for (long i = 0; i < 2; i++) {
		if (pthread_create(&t[i], NULL, worker, (void *)i)) {
			fprintf(stderr, "pthread_create failed\n");
			return 1;
		}
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	ww_mutex_destroy(&locks[0]);
	ww_mutex_destroy(&locks[1]);
	if (counter != 2 * ROUNDS) {
		fprintf(stderr, "counter %lu, expected %d\n", counter,
			2 * ROUNDS);
		return 1;
	}
	printf("tsan-flavour client: %lu rounds, %lu back-offs\n", counter,
	       backoffs[0] + backoffs[1]);
	return 0;
}
