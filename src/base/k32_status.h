/*
 * k32_status.h - the one status type of kube32 and the caller-owned error detail.
 *
 * Every fallible function returns a k32_status_t: K32_OK (0) or a negative code. The values
 * are Zircon's (kobj.md section 6), so kobj statuses pass through pods and traces unchanged.
 * Results go out through parameters. Detail (which field, which limit, what to do) goes into
 * a caller-owned struct k32_err; filling it never allocates, so it works when memory is out.
 *
 * Context: any thread. No locks, no allocation.
 */
#ifndef K32_STATUS_H
#define K32_STATUS_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "k32/k32_config.h"

typedef int32_t k32_status_t;

/* clang-format off */
enum {
	K32_OK                =   0, /* success */
	K32_ERR_INTERNAL      =  -1, /* an invariant broke: a bug; waiting will not help */
	K32_ERR_NOT_SUPPORTED =  -2, /* the operation is not valid for this object or build */
	K32_ERR_NO_RESOURCES  =  -3, /* a named limit or quota was reached; free something first */
	K32_ERR_NO_MEMORY     =  -4, /* an allocator or pool is exhausted; may pass when memory frees */
	K32_ERR_INVALID_ARGS  = -10, /* bad argument, pointer, range or input; fix the caller */
	K32_ERR_BAD_HANDLE    = -11, /* not a live handle (stale generation included) */
	K32_ERR_WRONG_TYPE    = -12, /* the handle or value is of another type */
	K32_ERR_OUT_OF_RANGE  = -14, /* a size or count is over its limit */
	K32_ERR_BUFFER_TOO_SMALL = -15, /* output buffer too small; the needed size is reported */
	K32_ERR_BAD_STATE     = -20, /* not valid in the object's current state */
	K32_ERR_TIMED_OUT     = -21, /* the deadline passed; retrying may succeed */
	K32_ERR_SHOULD_WAIT   = -22, /* would block: wait for a signal and retry */
	K32_ERR_CANCELED      = -23, /* aborted: its handle was closed or the caller stopped it */
	K32_ERR_PEER_CLOSED   = -24, /* the other end is gone; waiting will not help */
	K32_ERR_NOT_FOUND     = -25, /* no such object, name or key */
	K32_ERR_ALREADY_EXISTS = -26, /* the name or key is taken */
	K32_ERR_ACCESS_DENIED = -30, /* a right or permission is missing */
	K32_ERR_IO            = -40, /* the OS or a device reported an I/O error */
	K32_ERR_CORRUPT       = -41, /* stored or received data failed a check (CRC, format) */
	K32_ERR_CONFLICT      = -50, /* optimistic concurrency: stale version; re-read and retry */
	K32_ERR_COMPACTED     = -51, /* the requested revision is gone from history; relist */
	K32_ERR_TRAP          = -60, /* a Wasm pod trapped; the message says what and where */
};
/* clang-format on */

/* Caller-owned error detail. Fixed size: filling it never allocates. */
struct k32_err {
	k32_status_t status;	   /* the status that was returned */
	const char *module;	   /* static string naming the module ("wasm", "store") */
	char msg[K32_ERR_MSG_LEN]; /* one line: what failed, where, which limit, what to do */
};

/* Short stable name of a status ("NO_MEMORY"); "UNKNOWN" for a value not listed above. */
const char *k32_status_name(k32_status_t status);

/*
 * Records status, module and a printf-style message in err (which may be NULL) and returns
 * status, so a failing path reads `return k32_err_set(err, K32_ERR_X, "mod", "...", ...)`.
 * A message longer than K32_ERR_MSG_LEN - 1 bytes is cut and ends with "..." (so a cut
 * shows); messages clip their user-supplied parts (K32_CLIP) so that never happens to them.
 * Never allocates.
 */
k32_status_t k32_err_set(struct k32_err *err, k32_status_t status, const char *module,
			 const char *fmt, ...) __attribute__((format(printf, 4, 5)));
k32_status_t k32_err_vset(struct k32_err *err, k32_status_t status, const char *module,
			  const char *fmt, va_list ap);

/* Bytes of a k32_clip buffer. */
#define K32_CLIP_BUF (K32_MSG_CLIP_LEN + 1)

/*
 * A user-supplied part of a message (a name, path, image, value) made to fit: s itself when
 * it has at most K32_MSG_CLIP_LEN bytes, else its start and its end around "..." in out
 * ("my-very-long-deploy...-5d8f7c9b4-x2k7q"), so a message that carries it keeps its own
 * words and its advice whole. s NULL reads as "". Returns out. Never allocates.
 */
const char *k32_clip(char out[K32_CLIP_BUF], const char *s);
/* The same into out of cap bytes (s itself when shorter than cap). */
const char *k32_clip_to(char *out, size_t cap, const char *s);
/* The same for n bytes at s that need not end with a NUL (a name inside a module). */
const char *k32_clip_mem(char *out, size_t cap, const char *s, size_t n);

/* k32_clip into a buffer that lives until the end of the enclosing statement block, for
 * use as a printf argument: k32_err_set(err, ..., "pod %s: ...", K32_CLIP(name)). */
#define K32_CLIP(s) k32_clip((char[K32_CLIP_BUF]){0}, (s))

/* Clears err to K32_OK and an empty message. err may be NULL. */
void k32_err_clear(struct k32_err *err);

#endif /* K32_STATUS_H */
