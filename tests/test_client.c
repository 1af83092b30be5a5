// SPDX-License-Identifier: MIT
/*
 * Clients, handles and PRIME sharing (ttmsim/execbuf.h): GEM's handle
 * rules (never 0, lowest free first, reused only after close, one handle
 * per buffer per client), references (the device's buffer count says when
 * a buffer is freed), the lifetime of exported descriptors, bogus
 * descriptors, a handle table used by many threads at once, whether a
 * handle is new (a driver's GEM-style handle count), and the first
 * clients of a device opened at once.
 */
#include <drm_fourcc.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "lib/bo_helpers.h"

#include "ttmsim/execbuf.h"
#include "ttmsim/fence.h"

struct fixture {
	struct ttm_gpu *gpu;
	struct ttm_device *dev;
};

static int fixture_setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	checks_reset(state);
	assert_non_null(fx);
	assert_int_equal(ttm_gpu_create(1, &(struct ttm_gpu_options){
					.flags = TTM_GPU_DETERMINISTIC },
					&fx->gpu), 0);
	assert_int_equal(ttm_device_create(&(struct ttm_device_options){
					.gpu = fx->gpu }, &fx->dev), 0);
	*state = fx;
	return 0;
}

static int fixture_teardown(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(ttm_device_destroy(fx->dev), 0);
	ttm_gpu_destroy(fx->gpu);
	free(fx);
	return 0;
}

static uint64_t buffers(struct ttm_device *dev)
{
	struct ttm_device_stats s;

	ttm_device_get_stats(dev, &s);
	return s.buffers;
}

static struct ttm_client *open_client(struct ttm_device *dev)
{
	struct ttm_client *c = NULL;

	assert_int_equal(ttm_client_open(dev, &c), 0);
	assert_non_null(c);
	return c;
}

static uint32_t create(struct ttm_client *c)
{
	uint32_t h = 0;

	assert_int_equal(ttm_client_bo_create(c, 4096, &system_only, 0, &h),
			 0);
	assert_int_not_equal(h, 0);
	return h;
}

/* The buffer of @h, without keeping a reference (the client has one). */
static struct ttm_bo *bo_of(struct ttm_client *c, uint32_t h)
{
	struct ttm_bo *bo = ttm_client_lookup(c, h);

	assert_non_null(bo);
	ttm_bo_put(bo);
	return bo;
}

static int export(struct ttm_client *c, uint32_t h)
{
	int fd = -1;

	assert_int_equal(ttm_client_export_fd(c, h, &fd), 0);
	assert_true(fd >= 0);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	return fd;
}

/* Import @fd into @c: a new handle if @want_new, else one @c had. */
static uint32_t import(struct ttm_client *c, int fd, bool want_new)
{
	bool is_new = !want_new;
	uint32_t h = 0;

	assert_int_equal(ttm_client_import_fd(c, fd, &h, &is_new), 0);
	assert_int_not_equal(h, 0);
	assert_int_equal(is_new, want_new);
	return h;
}

/* Add @bo to @c: a new handle if @want_new, else the one @c had. */
static uint32_t add(struct ttm_client *c, struct ttm_bo *bo, bool want_new)
{
	bool is_new = !want_new;
	uint32_t h = 0;

	assert_int_equal(ttm_client_bo_add(c, bo, &h, &is_new), 0);
	assert_int_not_equal(h, 0);
	assert_int_equal(is_new, want_new);
	return h;
}

/* ---- clients and handles ---------------------------------------------- */

static void test_open_needs_gpu(void **state)
{
	struct fixture *fx = *state;
	struct ttm_device *plain;
	struct ttm_client *c = (void *)1;

	assert_int_equal(ttm_device_create(NULL, &plain), 0);
	assert_int_equal(ttm_client_open(plain, &c), -EINVAL);
	assert_ptr_equal(c, (void *)1); /* untouched on failure */
	assert_int_equal(ttm_device_destroy(plain), 0);

	c = open_client(fx->dev);
	assert_ptr_equal(ttm_client_device(c), fx->dev);
	ttm_client_set_event_sink(c, NULL, NULL);
	ttm_client_close(c);
	ttm_client_close(NULL);
}

static void test_handles_lowest_first(void **state)
{
	struct fixture *fx = *state;
	struct ttm_client *c = open_client(fx->dev);

	assert_int_equal(create(c), 1);
	assert_int_equal(create(c), 2);
	assert_int_equal(create(c), 3);

	/* Free only after close, then the lowest first. */
	assert_int_equal(ttm_client_bo_close(c, 2), 0);
	assert_int_equal(create(c), 2);
	assert_int_equal(ttm_client_bo_close(c, 3), 0);
	assert_int_equal(ttm_client_bo_close(c, 1), 0);
	assert_int_equal(create(c), 1);
	assert_int_equal(create(c), 3);
	assert_int_equal(create(c), 4);

	/* Unknown and already closed handles. */
	assert_int_equal(ttm_client_bo_close(c, 0), -ENOENT);
	assert_int_equal(ttm_client_bo_close(c, 5), -ENOENT);
	assert_int_equal(ttm_client_bo_close(c, UINT32_MAX), -ENOENT);
	assert_int_equal(ttm_client_bo_close(c, 4), 0);
	assert_int_equal(ttm_client_bo_close(c, 4), -ENOENT);
	assert_int_equal(buffers(fx->dev), 3);

	ttm_client_close(c);
	assert_int_equal(buffers(fx->dev), 0);
}

/* Many holes, closed in scrambled order: they come back in rising order. */
static void test_handles_many(void **state)
{
	struct fixture *fx = *state;
	struct ttm_client *c = open_client(fx->dev);
	const uint32_t n = 1000;
	uint32_t i, h;

	for (i = 1; i <= n; i++)
		assert_int_equal(create(c), i);
	for (i = 0; i < n / 2; i++) {
		/* A permutation of the even handles 2..n (n/2 coprime 7). */
		h = 2 * ((i * 7) % (n / 2) + 1);
		assert_int_equal(ttm_client_bo_close(c, h), 0);
	}
	assert_int_equal(buffers(fx->dev), n / 2);
	for (i = 1; i <= n / 2; i++)
		assert_int_equal(create(c), 2 * i);
	assert_int_equal(create(c), n + 1);

	/* Every buffer maps back to its own handle. */
	for (i = 1; i <= n + 1; i++)
		assert_int_equal(add(c, bo_of(c, i), false), i);
	assert_int_equal(buffers(fx->dev), n + 1);
	ttm_client_close(c);
	assert_int_equal(buffers(fx->dev), 0);
}

static void test_create_errors(void **state)
{
	struct fixture *fx = *state;
	struct ttm_client *c = open_client(fx->dev);
	uint32_t h = 77;

	assert_int_equal(ttm_client_bo_create(c, 3, &system_only, 0, &h),
			 -EINVAL);
	assert_int_equal(ttm_client_bo_create(c, 0, &system_only, 0, &h),
			 -EINVAL);
	assert_int_equal(ttm_client_bo_create_fourcc(c, 4, 4, DRM_FORMAT_NV12,
						     &system_only, 0, &h),
			 -EINVAL);
	assert_int_equal(h, 77);
	/* Failures used no handle. */
	assert_int_equal(create(c), 1);

	assert_int_equal(ttm_client_bo_create_fourcc(c, 16, 8,
						     DRM_FORMAT_XRGB8888,
						     &system_only, 0, &h), 0);
	assert_int_equal(h, 2);
	assert_int_equal(ttm_bo_size(bo_of(c, h)), 16 * 8 * 4);
	ttm_client_close(c);
	assert_int_equal(buffers(fx->dev), 0);
}

static void test_lookup(void **state)
{
	struct fixture *fx = *state;
	struct ttm_client *c = open_client(fx->dev);
	struct ttm_bo *bo;
	uint32_t h = create(c);

	assert_null(ttm_client_lookup(c, 0));
	assert_null(ttm_client_lookup(c, h + 1));
	assert_null(ttm_client_lookup(c, UINT32_MAX));

	/* The lookup's reference keeps the buffer past its handle's close. */
	bo = ttm_client_lookup(c, h);
	assert_non_null(bo);
	assert_int_equal(ttm_bo_size(bo), 4096);
	assert_int_equal(ttm_client_bo_close(c, h), 0);
	assert_null(ttm_client_lookup(c, h));
	assert_int_equal(buffers(fx->dev), 1);
	ttm_bo_put(bo);
	assert_int_equal(buffers(fx->dev), 0);
	ttm_client_close(c);
}

static void test_handles_per_client(void **state)
{
	struct fixture *fx = *state;
	struct ttm_client *a = open_client(fx->dev), *b = open_client(fx->dev);
	uint32_t ha = create(a), hb;

	assert_null(ttm_client_lookup(b, ha));
	assert_int_equal(ttm_client_bo_close(b, ha), -ENOENT);
	hb = create(b);
	assert_int_equal(hb, ha); /* both start at 1 ... */
	assert_ptr_not_equal(bo_of(a, ha), bo_of(b, hb)); /* ... elsewhere */
	ttm_client_close(a);
	assert_int_equal(buffers(fx->dev), 1);
	ttm_client_close(b);
	assert_int_equal(buffers(fx->dev), 0);
}

static void test_close_releases(void **state)
{
	struct fixture *fx = *state;
	struct ttm_client *a = open_client(fx->dev), *b = open_client(fx->dev);
	uint32_t h1 = create(a), h2 = create(a), hb;

	(void)h2;
	hb = add(b, bo_of(a, h1), true);
	assert_int_equal(hb, 1);
	assert_int_equal(buffers(fx->dev), 2);
	ttm_client_close(a);
	/* b's handle keeps its buffer; a's other one is gone. */
	assert_int_equal(buffers(fx->dev), 1);
	assert_int_equal(ttm_bo_size(bo_of(b, hb)), 4096);
	ttm_client_close(b);
	assert_int_equal(buffers(fx->dev), 0);
}

static void test_add_same_bo(void **state)
{
	struct fixture *fx = *state;
	struct ttm_client *c = open_client(fx->dev);
	struct ttm_bo *bo;
	uint32_t h, h2, other = create(c);

	assert_int_equal(ttm_bo_create(fx->dev, 4096, &system_only, 0, &bo), 0);
	h = add(c, bo, true);
	assert_int_equal(h, other + 1);
	assert_int_equal(add(c, bo, false), h);
	/* Whether it is new is the caller's to ask. */
	assert_int_equal(ttm_client_bo_add(c, bo, &h2, NULL), 0);
	assert_int_equal(h2, h);
	assert_ptr_equal(bo_of(c, h), bo);
	/* The handle the buffer was created with is not new either. */
	assert_int_equal(add(c, bo_of(c, other), false), other);

	/* One handle, one reference: one close drops it. */
	assert_int_equal(ttm_client_bo_close(c, h), 0);
	assert_int_equal(ttm_client_bo_close(c, h), -ENOENT);
	assert_int_equal(buffers(fx->dev), 2);
	ttm_bo_put(bo);
	assert_int_equal(buffers(fx->dev), 1);

	/* A buffer added after its handle was closed gets a fresh one. */
	assert_int_equal(ttm_bo_create(fx->dev, 4096, &system_only, 0, &bo), 0);
	h = add(c, bo, true);
	assert_int_equal(ttm_client_bo_close(c, h), 0);
	assert_int_equal(add(c, bo, true), h);
	ttm_bo_put(bo);
	ttm_client_close(c);
	assert_int_equal(buffers(fx->dev), 0);
}

/* ---- PRIME ------------------------------------------------------------ */

static void test_prime_share(void **state)
{
	struct fixture *fx = *state;
	struct ttm_client *a = open_client(fx->dev), *b = open_client(fx->dev);
	uint32_t pad = create(b), ha = create(a), hb, hb2;
	int fd, fd2;

	(void)pad;
	assert_int_equal(ttm_client_export_fd(a, ha + 1, &fd), -ENOENT);
	assert_int_equal(ttm_client_export_fd(a, 0, &fd), -ENOENT);

	fd = export(a, ha);
	hb = import(b, fd, true);
	assert_int_equal(hb, 2);
	assert_ptr_equal(bo_of(a, ha), bo_of(b, hb));
	/* Again, and from a second export: the handle b has. */
	assert_int_equal(import(b, fd, false), hb);
	fd2 = export(a, ha);
	assert_int_not_equal(fd2, fd);
	assert_int_equal(import(b, fd2, false), hb);
	/* Into the exporter: its own handle. */
	assert_int_equal(import(a, fd2, false), ha);
	/* Exported from the importer, back to the exporter: the same. */
	close(fd2);
	fd2 = export(b, hb);
	assert_int_equal(import(a, fd2, false), ha);

	/* Handles closed, fds open: the buffer stays. */
	assert_int_equal(ttm_client_bo_close(b, hb), 0);
	assert_int_equal(ttm_client_bo_close(a, ha), 0);
	assert_int_equal(buffers(fx->dev), 2);
	hb2 = import(b, fd, true);
	assert_int_equal(hb2, hb); /* the lowest free again */
	assert_int_equal(ttm_client_bo_close(b, hb2), 0);

	close(fd);
	close(fd2);
	ttm_client_close(a); /* collects */
	assert_int_equal(buffers(fx->dev), 1);
	ttm_client_close(b);
	assert_int_equal(buffers(fx->dev), 0);
}

static void test_prime_fd_outlives_client(void **state)
{
	struct fixture *fx = *state;
	struct ttm_client *a = open_client(fx->dev), *b;
	int fd, dup_fd, other;
	uint32_t h;

	fd = export(a, create(a));
	ttm_client_close(a);
	assert_int_equal(buffers(fx->dev), 1);

	/* A client opened after the exporter closed still imports it. */
	b = open_client(fx->dev);
	h = import(b, fd, true);
	assert_int_equal(ttm_client_bo_close(b, h), 0);
	assert_int_equal(buffers(fx->dev), 1);

	/* A dup keeps it after the original is closed. */
	dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	assert_true(dup_fd >= 0);
	close(fd);
	other = export(b, create(b)); /* a PRIME call: collects nothing */
	assert_int_equal(buffers(fx->dev), 2);
	assert_int_equal(import(b, dup_fd, true), 2);
	assert_int_equal(ttm_client_bo_close(b, 2), 0);

	/* Last read end closed: freed at the next PRIME call, not before. */
	close(dup_fd);
	assert_int_equal(buffers(fx->dev), 2);
	assert_int_equal(import(b, other, false), 1);
	assert_int_equal(buffers(fx->dev), 1);

	close(other);
	assert_int_equal(ttm_client_bo_close(b, 1), 0);
	assert_int_equal(buffers(fx->dev), 1);
	ttm_client_close(b); /* collects */
	assert_int_equal(buffers(fx->dev), 0);
}

/*
 * Many exports whose last descriptors closed at once: one PRIME call frees
 * them all, though the registry puts them in batches outside its lock.
 */
static void test_prime_collect_many(void **state)
{
	struct fixture *fx = *state;
	struct ttm_client *a = open_client(fx->dev), *b;
	enum { N = 40 };
	int fds[N];
	size_t i;

	for (i = 0; i < N; i++)
		fds[i] = export(a, create(a));
	ttm_client_close(a);
	assert_int_equal(buffers(fx->dev), N);
	for (i = 0; i < N; i++)
		close(fds[i]);
	b = open_client(fx->dev);
	ttm_client_close(b); /* collects */
	assert_int_equal(buffers(fx->dev), 0);
}

static void test_prime_bogus_fd(void **state)
{
	struct fixture *fx = *state;
	struct ttm_client *c = open_client(fx->dev), *o;
	struct ttm_device *other_dev;
	struct ttm_fence *fence;
	uint32_t h = 99;
	bool is_new = true;
	int fds[2], fd, null_fd, fence_fd;

	assert_int_equal(pipe(fds), 0);
	assert_int_equal(ttm_client_import_fd(c, fds[0], &h, &is_new), -EBADF);
	assert_int_equal(ttm_client_import_fd(c, fds[1], &h, &is_new), -EBADF);
	close(fds[0]);
	close(fds[1]);
	assert_int_equal(ttm_client_import_fd(c, -1, &h, &is_new), -EBADF);
	assert_int_equal(ttm_client_import_fd(c, fds[0], &h, &is_new), -EBADF);
	null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	assert_true(null_fd >= 0);
	assert_int_equal(ttm_client_import_fd(c, null_fd, &h, &is_new), -EBADF);
	close(null_fd);

	/* A fence's descriptor is a pipe too, but not a buffer's. */
	assert_int_equal(ttm_fence_create(ttm_fence_context_alloc(1), 1,
					  &fence), 0);
	fence_fd = ttm_fence_export_fd(fence);
	assert_true(fence_fd >= 0);
	assert_int_equal(ttm_client_import_fd(c, fence_fd, &h, &is_new),
			 -EBADF);
	close(fence_fd);
	ttm_fence_signal(fence, 0);
	ttm_fence_put(fence);

	/* The read end of an export, closed: -EBADF, and nothing kept. */
	fd = export(c, create(c));
	close(fd);
	assert_int_equal(ttm_client_import_fd(c, fd, &h, &is_new), -EBADF);
	assert_int_equal(h, 99);

	/*
	 * A buffer of a Wound-Wait device, whose class of its own no ticket
	 * of this device could lock.
	 */
	assert_int_equal(ttm_device_create(&(struct ttm_device_options){
					.gpu = fx->gpu, .wound_wait = true },
					   &other_dev), 0);
	o = open_client(other_dev);
	fd = export(o, create(o));
	assert_int_equal(ttm_client_import_fd(c, fd, &h, &is_new), -EXDEV);
	assert_int_equal(h, 99);
	assert_int_equal(import(o, fd, false), 1);
	/* Handles name a device's own buffers and imports only. */
	assert_int_equal(ttm_client_bo_add(c, bo_of(o, 1), &h, &is_new),
			 -EINVAL);
	assert_int_equal(h, 99);
	assert_true(is_new); /* untouched by the failures */
	close(fd);
	ttm_client_close(o);
	assert_int_equal(buffers(other_dev), 0);
	assert_int_equal(ttm_device_destroy(other_dev), 0);

	ttm_client_close(c);
	assert_int_equal(buffers(fx->dev), 0);
}

/*
 * PRIME across devices of the shared class: the importer gets a buffer of
 * its own device that shares the exporter's reservation and contents,
 * one per device, and a re-export goes back to the exporter's buffer.
 */
static void test_prime_xdev(void **state)
{
	struct fixture *fx = *state;
	struct ttm_client *c = open_client(fx->dev), *o, *c2;
	struct ttm_device *other_dev;
	struct ttm_bo *mine, *theirs;
	struct ttm_device_stats st;
	uint32_t h, ho, word = 0x1234abcd, back = 0;
	int fd, fd2, fd3;

	assert_int_equal(ttm_device_create(&(struct ttm_device_options){
					.gpu = fx->gpu }, &other_dev), 0);
	o = open_client(other_dev);
	ho = create(o);
	theirs = bo_of(o, ho);
	fd = export(o, ho);

	h = import(c, fd, true);
	mine = bo_of(c, h);
	assert_ptr_not_equal(mine, theirs);
	assert_ptr_equal(ttm_bo_device(mine), fx->dev);
	assert_int_equal(ttm_bo_type(mine), TTM_BO_TYPE_SG);
	assert_ptr_equal(ttm_bo_exporter(mine), theirs);
	assert_ptr_equal(ttm_bo_resv(mine), ttm_bo_resv(theirs));
	assert_int_equal(ttm_bo_size(mine), ttm_bo_size(theirs));
	/* It takes none of this device's VRAM or GTT. */
	ttm_device_get_stats(fx->dev, &st);
	assert_int_equal(st.buffers, 1);
	assert_int_equal(st.domain[TTM_DOMAIN_SYSTEM].buffers, 1);

	/* Again, and through a second export: the same buffer and handle. */
	assert_int_equal(import(c, fd, false), h);
	fd2 = export(o, ho);
	assert_int_equal(import(c, fd2, false), h);
	/* Another client of the device sees the same import. */
	c2 = open_client(fx->dev);
	assert_ptr_equal(bo_of(c2, import(c2, fd, true)), mine);
	ttm_client_close(c2);

	/* One set of pages: written through one, read through the other. */
	assert_int_equal(ttm_bo_reserve(mine, false, false, NULL), 0);
	assert_int_equal(ttm_bo_write(mine, 8, &word, sizeof(word)), 0);
	ttm_bo_unreserve(mine);
	assert_int_equal(ttm_bo_reserve(theirs, false, false, NULL), 0);
	assert_int_equal(ttm_bo_read(theirs, 8, &back, sizeof(back)), 0);
	ttm_bo_unreserve(theirs);
	assert_int_equal(back, word);

	/* Re-exported, it goes home as the exporter's own buffer. */
	fd3 = export(c, h);
	assert_int_equal(import(o, fd3, false), ho);
	close(fd);
	close(fd2);
	close(fd3);

	/* The import keeps the exporter's buffer after its client went. */
	ttm_client_close(o);
	assert_int_equal(buffers(other_dev), 1);
	ttm_client_close(c);
	assert_int_equal(buffers(fx->dev), 0);
	assert_int_equal(buffers(other_dev), 0);
	assert_int_equal(ttm_device_destroy(other_dev), 0);
}

/* ---- threads ---------------------------------------------------------- */

#define N_THREADS 8
#define N_OPS 2000
#define KEEP 16

struct worker {
	struct ttm_client *c, *peer;
	unsigned int seed;
	uint32_t live[KEEP]; /* 0: empty */
	unsigned int ops;
};

/*
 * Creates, closes, looks up, re-adds and shares through PRIME, keeping up
 * to KEEP handles of its own; no other thread may ever see those handles
 * handed out again while they are live.
 */
static void *worker_main(void *arg)
{
	struct worker *w = arg;
	unsigned int i, k;
	uint32_t h, h2;
	bool is_new;
	int ret, fd;

	for (i = 0; i < N_OPS; i++) {
		k = (unsigned int)rand_r(&w->seed) % KEEP;
		h = w->live[k];
		if (!h) {
			ret = ttm_client_bo_create(w->c, 4, &system_only, 0,
						   &w->live[k]);
			CHECK_INT(ret, 0);
			CHECK(w->live[k] != 0);
			continue;
		}
		switch (rand_r(&w->seed) % 4) {
		case 0: {
			struct ttm_bo *bo = ttm_client_lookup(w->c, h);

			if (!CHECK(bo))
				break;
			is_new = true;
			CHECK_INT(ttm_client_bo_add(w->c, bo, &h2, &is_new),
				  0);
			CHECK_INT(h2, h);
			CHECK(!is_new);
			ttm_bo_put(bo);
			break;
		}
		case 1:
			if (!CHECK_INT(ttm_client_export_fd(w->c, h, &fd), 0))
				break;
			is_new = false;
			ret = ttm_client_import_fd(w->peer, fd, &h2, &is_new);
			CHECK_INT(ret, 0);
			CHECK(is_new); /* the peer closes each import */
			close(fd);
			if (ret == 0)
				CHECK_INT(ttm_client_bo_close(w->peer, h2), 0);
			break;
		default:
			CHECK_INT(ttm_client_bo_close(w->c, h), 0);
			w->live[k] = 0;
			break;
		}
		w->ops++;
	}
	return NULL;
}

static void test_threads(void **state)
{
	struct fixture *fx = *state;
	struct ttm_client *c = open_client(fx->dev);
	struct ttm_client *peer = open_client(fx->dev);
	struct worker w[N_THREADS];
	pthread_t t[N_THREADS];
	uint32_t max = 0, n_live = 0, h, expect;
	bool *seen;
	unsigned int i, k;

	memset(w, 0, sizeof(w));
	for (i = 0; i < N_THREADS; i++) {
		w[i].c = c;
		w[i].peer = peer;
		w[i].seed = 12345u + i;
		t[i] = start_thread(worker_main, &w[i]);
	}
	for (i = 0; i < N_THREADS; i++)
		join_thread(t[i]);
	assert_checks_passed();
	/* Its handles are closed; closing it collects the last exports. */
	ttm_client_close(peer);

	/* Every live handle is one thread's, once; the rest are free. */
	for (i = 0; i < N_THREADS; i++)
		for (k = 0; k < KEEP; k++)
			if (w[i].live[k] > max)
				max = w[i].live[k];
	seen = calloc(max + 2, sizeof(*seen));
	assert_non_null(seen);
	for (i = 0; i < N_THREADS; i++) {
		for (k = 0; k < KEEP; k++) {
			h = w[i].live[k];
			if (!h)
				continue;
			assert_false(seen[h]);
			seen[h] = true;
			n_live++;
		}
	}
	for (h = 1; h <= max + 1; h++) {
		struct ttm_bo *bo = ttm_client_lookup(c, h);

		assert_int_equal(bo != NULL, seen[h]);
		ttm_bo_put(bo);
	}
	assert_int_equal(buffers(fx->dev), n_live);

	/* The table still hands out the lowest free handle. */
	for (expect = 1; seen[expect]; expect++)
		;
	assert_int_equal(create(c), expect);
	free(seen);

	ttm_client_close(c);
	assert_int_equal(buffers(fx->dev), 0);
}

/*
 * A driver's GEM-style handle count, kept from what bo_add says: of the
 * threads adding one buffer to a shared client at once, one made the
 * handle; each of their own clients got one too. Every handle counted is
 * a reference, dropped by one close.
 */
struct adder {
	struct ttm_client *shared, *own;
	struct ttm_bo *bo;
	pthread_barrier_t *start;
	unsigned int news;
};

static void *adder_main(void *arg)
{
	struct adder *a = arg;
	unsigned int i;
	bool is_new;
	uint32_t h;

	pthread_barrier_wait(a->start);
	for (i = 0; i < 64; i++) {
		if (!CHECK_INT(ttm_client_bo_add(a->shared, a->bo, &h,
						 &is_new), 0))
			break;
		a->news += is_new;
		if (!CHECK_INT(ttm_client_bo_add(a->own, a->bo, &h, &is_new),
			       0))
			break;
		a->news += is_new;
	}
	return NULL;
}

static void test_handle_count(void **state)
{
	struct fixture *fx = *state;
	struct ttm_client *shared = open_client(fx->dev);
	struct adder a[N_THREADS];
	pthread_t t[N_THREADS];
	pthread_barrier_t start;
	unsigned int i, handle_count = 0;
	struct ttm_bo *bo;

	assert_int_equal(ttm_bo_create(fx->dev, 4096, &system_only, 0, &bo), 0);
	pthread_barrier_init(&start, NULL, N_THREADS);
	for (i = 0; i < N_THREADS; i++) {
		a[i] = (struct adder){
			.shared = shared, .own = open_client(fx->dev),
			.bo = bo, .start = &start,
		};
		t[i] = start_thread(adder_main, &a[i]);
	}
	for (i = 0; i < N_THREADS; i++) {
		join_thread(t[i]);
		handle_count += a[i].news;
	}
	pthread_barrier_destroy(&start);
	assert_checks_passed();
	assert_int_equal(handle_count, N_THREADS + 1);

	/* One close per counted handle; then only our reference is left. */
	assert_int_equal(ttm_client_bo_close(shared, 1), 0);
	handle_count--;
	for (i = 0; i < N_THREADS; i++) {
		assert_int_equal(ttm_client_bo_close(a[i].own, 1), 0);
		handle_count--;
		assert_null(ttm_client_lookup(a[i].own, 1));
		ttm_client_close(a[i].own);
	}
	assert_int_equal(handle_count, 0);
	assert_null(ttm_client_lookup(shared, 1));
	assert_int_equal(buffers(fx->dev), 1);
	ttm_bo_put(bo);
	assert_int_equal(buffers(fx->dev), 0);
	ttm_client_close(shared);
}

/*
 * The first clients of a device, opened by many threads at once, attach
 * one execbuf state between them: every client's job is counted there.
 * The states of the losers of the race are freed (ASan: no leak).
 */
struct first_open {
	struct ttm_device *dev;
	pthread_barrier_t *start;
	struct ttm_client *c;
};

static void *first_open_main(void *arg)
{
	struct first_open *fo = arg;

	pthread_barrier_wait(fo->start);
	CHECK_INT(ttm_client_open(fo->dev, &fo->c), 0);
	return NULL;
}

static void test_first_open_race(void **state)
{
	struct fixture *fx = *state;
	struct first_open fo[N_THREADS];
	pthread_t t[N_THREADS];
	pthread_barrier_t start;
	struct ttm_execbuf_stats st;
	unsigned int i;

	ttm_execbuf_get_stats(fx->dev, &st);
	assert_int_equal(st.submitted, 0);
	pthread_barrier_init(&start, NULL, N_THREADS);
	for (i = 0; i < N_THREADS; i++) {
		fo[i] = (struct first_open){ .dev = fx->dev, .start = &start };
		t[i] = start_thread(first_open_main, &fo[i]);
	}
	for (i = 0; i < N_THREADS; i++)
		join_thread(t[i]);
	pthread_barrier_destroy(&start);
	assert_checks_passed();

	for (i = 0; i < N_THREADS; i++) {
		struct ttm_execbuf_bo bo = {
			.handle = create(fo[i].c),
			.flags = TTM_EXECBUF_BO_WRITE,
		};
		struct ttm_execbuf_args args = {
			.bos = &bo, .n_bos = 1, .op = TTM_GPU_OP_NOP,
		};

		assert_int_equal(ttm_execbuf_submit(fo[i].c, &args), 0);
		ttm_fence_put(args.out_fence);
	}
	assert_int_equal(ttm_gpu_advance(fx->gpu, 1000), 0);
	ttm_execbuf_wait_idle(fx->dev);
	ttm_execbuf_get_stats(fx->dev, &st);
	assert_int_equal(st.submitted, N_THREADS);
	assert_int_equal(st.completed, N_THREADS);
	for (i = 0; i < N_THREADS; i++)
		ttm_client_close(fo[i].c);
	assert_int_equal(buffers(fx->dev), 0);
}

#define CLIENT_TEST(fn) \
	cmocka_unit_test_setup_teardown(fn, fixture_setup, fixture_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		CLIENT_TEST(test_open_needs_gpu),
		CLIENT_TEST(test_handles_lowest_first),
		CLIENT_TEST(test_handles_many),
		CLIENT_TEST(test_create_errors),
		CLIENT_TEST(test_lookup),
		CLIENT_TEST(test_handles_per_client),
		CLIENT_TEST(test_close_releases),
		CLIENT_TEST(test_add_same_bo),
		CLIENT_TEST(test_prime_share),
		CLIENT_TEST(test_prime_fd_outlives_client),
		CLIENT_TEST(test_prime_collect_many),
		CLIENT_TEST(test_prime_bogus_fd),
		CLIENT_TEST(test_prime_xdev),
		CLIENT_TEST(test_threads),
		CLIENT_TEST(test_handle_count),
		CLIENT_TEST(test_first_open_race),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
