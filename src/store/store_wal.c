/*
 * store_wal.c - the embedded store's log and snapshots: record codec, append + fsync,
 * load (snapshot, then replay with tail repair) and rotation.
 *
 * Files in the data directory:
 *   store.log    LOG_BEGIN (its sequence number and base revision), then records appended
 *                one per write, fsynced before the write is acknowledged
 *   store.snap   every live object at one revision and the log it expects, replaced
 *                atomically (write a temporary, fsync, rename, fsync the directory: the
 *                platform's file_write_atomic)
 *   store.closed one CLOSED record: the revision at the last clean close (atomic too)
 *
 * Record (all integers little-endian):
 *
 *   offset size field
 *        0    4 magic    "K32L" (0x4C32334B)
 *        4    4 len      bytes of the payload that follows the 12-byte header (24 + key + value)
 *        8    4 crc      k32_crc32 over the 4 len bytes, then the whole payload
 *       12    1 type     1 PUT, 2 DELETE, 3 SNAP_BEGIN, 4 SNAP_END, 5 LOG_BEGIN, 6 CLOSED
 *       13    1 flags    0 (anything else is corrupt)
 *       14    2 key_len  bytes of the key (<= K32_STORE_KEY_MAX)
 *       16    4 val_len  bytes of the value (<= K32_STORE_VALUE_MAX)
 *       20    8 rev      PUT/DELETE: the write's revision (in a snapshot: the object's
 *                        mod_rev); SNAP_*: the snapshot's revision; LOG_BEGIN: the revision
 *                        the log continues from; CLOSED: the revision at close
 *       28    8 aux      PUT: create_rev; DELETE: 0; SNAP_*: number of objects; LOG_BEGIN
 *                        and CLOSED: the log's sequence number
 *       36      key, then value (a PUT's value is the stored JSON text, revision stamped)
 *
 * The log is LOG_BEGIN, then PUT and DELETE records with revisions rising by exactly one. A
 * snapshot is SNAP_BEGIN, LOG_BEGIN (the log that must follow it: same revision, its
 * sequence number), one PUT per object in strictly increasing key order, SNAP_END (same rev
 * and count), and nothing after. Files written before LOG_BEGIN existed (no LOG_BEGIN in
 * either) are still read; the open then rotates them into the current format.
 *
 * Why the snapshot names its log: without it, a deleted or emptied log next to a snapshot
 * looks like "no writes since the snapshot", and every acknowledged revision after it is
 * lost without a word. Why store.closed: a log cut short (by hand, by a tool, by a broken
 * copy) looks like a crash's torn tail; after a clean close the log must reach the revision
 * recorded there, so a shortened log is told apart from a torn write. store.closed may be
 * stale (an older clean close): it only ever says "at least this revision", which stays
 * true. A log shortened after a crash (no clean close since) cannot be told from a torn
 * tail; the warning then says so and names the last revision known durable.
 *
 * Crash safety of every step:
 *  - append: a crash mid-record leaves a torn tail; on open it fails its length or CRC
 *    check, is reported (k32_log WARN: file, offset, fault, bytes dropped) and truncated.
 *    It was never acknowledged: acknowledgement comes after the file_sync that covers it
 *    (store_mem.c's group commit; a failed sync fails every write it was to cover and cuts
 *    the log back to the last synced size). A failed append or
 *    sync truncates the file back to its previous size before the write returns K32_ERR_IO,
 *    so no garbage sits between acknowledged records; if that truncation fails too the store
 *    refuses further writes (BAD_STATE) rather than append after garbage.
 *  - rotation: the snapshot (covering revision R = the last logged record, expecting log
 *    sequence S + 1) is written atomically first, then the log is replaced atomically by a
 *    new file holding LOG_BEGIN(R, S + 1). A crash between the two leaves log S with
 *    records <= R, which open accepts (they are covered) and finishes the rotation. If the
 *    replacement fails while running, writes retry it first and fail until it succeeds (a
 *    record appended to log S would be one the snapshot does not expect).
 *  - open: load the snapshot (if any; a snapshot that fails any check is an error, never
 *    dropped), check the log is the one it expects, then replay records with rev >
 *    snapshot rev. A bad record followed by a valid later record is not a torn tail but
 *    damage in the middle: open fails with CORRUPT naming both offsets instead of silently
 *    dropping acknowledged writes. A missing, emptied or foreign log, or one that ends
 *    before store.closed's revision, fails with CORRUPT unless accept_log_loss is set.
 *  - first open of an empty directory writes an empty snapshot (revision 0, log 1) and the
 *    log, so even the first log's loss is seen.
 *
 * Context: called with the backend's write_mu held (or single-threaded during open).
 */
#include "store/store_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/k32_crc32.h"
#include "base/k32_log.h"

#define MOD "store"

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
	       ((uint32_t)p[3] << 24);
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) | ((uint64_t)get32(p + 4) << 32);
}

/* ---- codec ---------------------------------------------------------------------------- */

size_t store_rec_encode_head(uint8_t *out, uint8_t type, const char *key, uint16_t key_len,
			     const void *val, uint32_t val_len, uint64_t rev, uint64_t aux)
{
	uint8_t *p = out + STORE_REC_HDR;
	uint32_t crc;

	put32(out, STORE_REC_MAGIC);
	put32(out + 4, STORE_REC_FIXED + (uint32_t)key_len + val_len);
	p[0] = type;
	p[1] = 0;
	put16(p + 2, key_len);
	put32(p + 4, val_len);
	put64(p + 8, rev);
	put64(p + 16, aux);
	if (key_len)
		memcpy(p + STORE_REC_FIXED, key, key_len);
	crc = k32_crc32(0, out + 4, 4);
	crc = k32_crc32(crc, p, STORE_REC_FIXED + (size_t)key_len);
	if (val_len)
		crc = k32_crc32(crc, val, val_len);
	put32(out + 8, crc);
	return STORE_REC_OVERHEAD + key_len;
}

k32_status_t store_rec_parse(const uint8_t *buf, size_t len, struct store_rec *out,
			     size_t *out_used, const char **out_fault)
{
	uint32_t plen, crc;
	const uint8_t *p;

	if (len < STORE_REC_HDR) {
		*out_fault = "torn record header";
		return K32_ERR_OUT_OF_RANGE;
	}
	if (get32(buf) != STORE_REC_MAGIC) {
		*out_fault = "bad record magic";
		return K32_ERR_CORRUPT;
	}
	plen = get32(buf + 4);
	if (plen < STORE_REC_FIXED || plen > STORE_REC_MAX_PAYLOAD) {
		*out_fault = "record length out of range";
		return K32_ERR_CORRUPT;
	}
	if (len - STORE_REC_HDR < plen) {
		*out_fault = "torn record (file ends inside it)";
		return K32_ERR_OUT_OF_RANGE;
	}
	p = buf + STORE_REC_HDR;
	crc = k32_crc32(k32_crc32(0, buf + 4, 4), p, plen);
	if (crc != get32(buf + 8)) {
		*out_fault = "CRC mismatch";
		return K32_ERR_CORRUPT;
	}
	out->type = p[0];
	out->key_len = get16(p + 2);
	out->val_len = get32(p + 4);
	out->rev = get64(p + 8);
	out->aux = get64(p + 16);
	if (out->type < STORE_REC_PUT || out->type > STORE_REC_CLOSED) {
		*out_fault = "unknown record type";
		return K32_ERR_CORRUPT;
	}
	if (p[1] != 0) {
		*out_fault = "nonzero record flags";
		return K32_ERR_CORRUPT;
	}
	if (out->key_len > K32_STORE_KEY_MAX || out->val_len > K32_STORE_VALUE_MAX ||
	    (uint64_t)STORE_REC_FIXED + out->key_len + out->val_len != plen) {
		*out_fault = "record lengths disagree";
		return K32_ERR_CORRUPT;
	}
	if ((out->type == STORE_REC_PUT || out->type == STORE_REC_DELETE) &&
	    (out->key_len == 0 || out->rev == 0)) {
		*out_fault = "record without key or revision";
		return K32_ERR_CORRUPT;
	}
	if (out->type == STORE_REC_PUT && (out->aux == 0 || out->aux > out->rev)) {
		*out_fault = "record create revision after its revision";
		return K32_ERR_CORRUPT;
	}
	if (out->type != STORE_REC_PUT && out->val_len != 0) {
		*out_fault = "value on a record that takes none";
		return K32_ERR_CORRUPT;
	}
	out->key = (const char *)p + STORE_REC_FIXED;
	out->val = p + STORE_REC_FIXED + out->key_len;
	*out_used = STORE_REC_HDR + plen;
	return K32_OK;
}

/* ---- append --------------------------------------------------------------------------- */

k32_status_t store_wal_append(struct store_mem *m, uint8_t type, const char *key, uint16_t key_len,
			      const void *val, uint32_t val_len, uint64_t rev, uint64_t aux,
			      struct k32_err *err)
{
	const struct k32_platform_ops *ops = k32_plat();
	uint8_t head[STORE_REC_OVERHEAD + K32_STORE_KEY_MAX];
	size_t n = store_rec_encode_head(head, type, key, key_len, val, val_len, rev, aux);
	struct k32_err e, e2;
	k32_status_t s;

	k32_err_clear(&e);
	s = ops->file_append(m->log, head, n, &e);
	if (s == K32_OK && val_len)
		s = ops->file_append(m->log, val, val_len, &e);
	if (s == K32_OK) {
		m->log_bytes += n + val_len;
		m->log_writes++;
		return K32_OK;
	}
	/* not acknowledged: take the partial record back out so later records follow the
	 * last good one */
	if (ops->file_truncate(m->log, m->log_bytes, &e2) != K32_OK ||
	    ops->file_sync(m->log, &e2) != K32_OK) {
		m->broken = true;
		K32_LOGE(MOD,
			 "store: %s: cannot cut a failed write back to %llu bytes (%s); refusing "
			 "writes until reopened",
			 m->log_path, (unsigned long long)m->log_bytes, e2.msg);
	}
	return k32_err_set(err, K32_ERR_IO, MOD, "store: revision %llu not saved to %s: %s",
			   (unsigned long long)rev, m->log_path, e.msg);
}

/* ---- rotation ------------------------------------------------------------------------- */

k32_status_t store_wal_log_replace(struct store_mem *m, struct k32_err *err)
{
	const struct k32_platform_ops *ops = k32_plat();
	uint8_t head[STORE_REC_OVERHEAD];
	size_t n =
	    store_rec_encode_head(head, STORE_REC_LOG_BEGIN, NULL, 0, NULL, 0, m->rev, m->log_seq);
	k32_status_t s;

	s = ops->file_write_atomic(m->log_path, head, n, err);
	if (s != K32_OK)
		return s;
	if (m->log)
		ops->file_close(m->log);
	m->log = NULL;
	s = ops->file_open_append(m->log_path, &m->log, err);
	if (s != K32_OK) {
		/* no file to append to: writes fail (write_begin) until a retry opens it */
		m->log_stale = true;
		return s;
	}
	m->log_bytes = n;
	m->synced_bytes = n;
	m->log_stale = false;
	return K32_OK;
}

k32_status_t store_wal_rotate(struct store_mem *m, struct k32_err *err)
{
	const struct k32_platform_ops *ops = k32_plat();
	size_t size = 3 * (size_t)STORE_REC_OVERHEAD, off = 0;
	uint64_t seq = m->log_seq + 1;
	uint8_t *buf;
	struct k32_err e;
	k32_status_t s;

	for (uint32_t i = 0; i < m->idx_count; i++)
		size += STORE_REC_OVERHEAD + m->idx[i]->key_len + m->idx[i]->len;
	buf = k32_alloc(&m->alloc, size);
	if (!buf)
		return k32_err_set(err, K32_ERR_NO_MEMORY, MOD,
				   "store: no memory for a %zu-byte snapshot", size);
	off += store_rec_encode_head(buf, STORE_REC_SNAP_BEGIN, NULL, 0, NULL, 0, m->rev,
				     m->idx_count);
	off += store_rec_encode_head(buf + off, STORE_REC_LOG_BEGIN, NULL, 0, NULL, 0, m->rev, seq);
	for (uint32_t i = 0; i < m->idx_count; i++) {
		const struct store_obj *o = m->idx[i];

		off += store_rec_encode_head(buf + off, STORE_REC_PUT, store_obj_key(o), o->key_len,
					     store_obj_data(o), o->len, o->mod_rev, o->create_rev);
		memcpy(buf + off, store_obj_data(o), o->len);
		off += o->len;
	}
	off += store_rec_encode_head(buf + off, STORE_REC_SNAP_END, NULL, 0, NULL, 0, m->rev,
				     m->idx_count);
	s = ops->file_write_atomic(m->snap_path, buf, off, err);
	k32_free(&m->alloc, buf, size);
	if (s != K32_OK)
		return s;
	m->snapshots++;
	m->log_seq = seq;
	/* From here the snapshot expects log seq: nothing may go to the old log any more. */
	m->log_stale = true;
	if (store_wal_log_replace(m, &e) != K32_OK)
		K32_LOGW(MOD,
			 "store: snapshot at revision %llu written but %s not replaced (%s); "
			 "writes retry it first and fail until it works",
			 (unsigned long long)m->rev, m->log_path, e.msg);
	return K32_OK;
}

void store_wal_mark_closed(struct store_mem *m)
{
	const struct k32_platform_ops *ops = k32_plat();
	uint8_t rec[STORE_REC_OVERHEAD];
	size_t n;
	struct k32_err e;

	if (!m->opened || !m->mark_path || m->broken || m->log_stale)
		return;
	n = store_rec_encode_head(rec, STORE_REC_CLOSED, NULL, 0, NULL, 0, m->rev, m->log_seq);
	if (ops->file_write_atomic(m->mark_path, rec, n, &e) != K32_OK)
		K32_LOGW(MOD, "store: cannot record the clean close in %s: %s", m->mark_path,
			 e.msg);
}

/* ---- load ----------------------------------------------------------------------------- */

/* Applies a PUT or DELETE during load. *out_fault set (and K32_ERR_CORRUPT) when the record
 * does not fit the state; other errors are resource failures. */
static k32_status_t apply(struct store_mem *m, const struct store_rec *rec, bool append_only,
			  const char **out_fault, struct k32_err *err)
{
	struct store_obj *obj;
	uint32_t pos;
	bool found;
	k32_status_t s;

	pos = store_mem_find(m, rec->key, rec->key_len, &found);
	if (rec->type == STORE_REC_DELETE) {
		if (!found) {
			*out_fault = "delete of a key that does not exist";
			return K32_ERR_CORRUPT;
		}
		m->obj_bytes -= store_obj_size(m->idx[pos]);
		store_mem_obj_unref(m, m->idx[pos]);
		memmove(&m->idx[pos], &m->idx[pos + 1],
			(size_t)(m->idx_count - pos - 1) * sizeof(*m->idx));
		m->idx_count--;
		return K32_OK;
	}
	if (append_only && pos != m->idx_count) {
		*out_fault = "snapshot keys out of order";
		return K32_ERR_CORRUPT;
	}
	obj = store_mem_obj_new(m, rec->key, rec->key_len, rec->val, rec->val_len, STORE_NO_STAMP,
				rec->rev, rec->aux);
	if (!obj)
		return k32_err_set(err, K32_ERR_NO_MEMORY, MOD,
				   "store: no memory to load %.*s (%" PRIu32 " bytes)",
				   (int)rec->key_len, rec->key, rec->val_len);
	if (m->obj_bytes + store_obj_size(obj) - (found ? store_obj_size(m->idx[pos]) : 0) >
	    m->max_bytes) {
		store_mem_obj_unref(m, obj);
		return k32_err_set(
		    err, K32_ERR_NO_RESOURCES, MOD,
		    "store: the stored objects need more than K32_STORE_MAX_BYTES=%zu; raise the "
		    "limit to open this data directory",
		    m->max_bytes);
	}
	if (found) {
		m->obj_bytes = m->obj_bytes - store_obj_size(m->idx[pos]) + store_obj_size(obj);
		store_mem_obj_unref(m, m->idx[pos]);
		m->idx[pos] = obj;
		return K32_OK;
	}
	s = store_mem_reserve(m, 1, err);
	if (s != K32_OK) {
		store_mem_obj_unref(m, obj);
		return s;
	}
	memmove(&m->idx[pos + 1], &m->idx[pos], (size_t)(m->idx_count - pos) * sizeof(*m->idx));
	m->idx[pos] = obj;
	m->idx_count++;
	m->obj_bytes += store_obj_size(obj);
	return K32_OK;
}

k32_status_t store_wal_load_snapshot(struct store_mem *m, const uint8_t *data, size_t len,
				     struct k32_err *err)
{
	struct store_rec rec;
	size_t off = 0, used;
	const char *fault = NULL;
	uint64_t snap_rev = 0, count = 0, n = 0;
	k32_status_t s;

	for (;;) {
		s = store_rec_parse(data + off, len - off, &rec, &used, &fault);
		if (s != K32_OK)
			break;
		if (off == 0) {
			if (rec.type != STORE_REC_SNAP_BEGIN) {
				fault = "does not start with a snapshot header";
				s = K32_ERR_CORRUPT;
				break;
			}
			snap_rev = rec.rev;
			count = rec.aux;
		} else if (rec.type == STORE_REC_LOG_BEGIN && n == 0 && m->log_seq == 0 &&
			   rec.rev == snap_rev && rec.aux != 0) {
			m->log_seq = rec.aux; /* the log this snapshot expects */
		} else if (rec.type == STORE_REC_PUT) {
			if (rec.rev > snap_rev) {
				fault = "object newer than the snapshot";
				s = K32_ERR_CORRUPT;
				break;
			}
			s = apply(m, &rec, true, &fault, err);
			if (s != K32_OK)
				break;
			n++;
		} else if (rec.type == STORE_REC_SNAP_END && rec.rev == snap_rev &&
			   rec.aux == count && n == count && off + used == len) {
			m->rev = snap_rev;
			return K32_OK;
		} else {
			fault = "bad trailer, count or record type";
			s = K32_ERR_CORRUPT;
			break;
		}
		off += used;
		if (off == len) {
			fault = "ends without its trailer";
			s = K32_ERR_CORRUPT;
			break;
		}
	}
	if (fault)
		return k32_err_set(
		    err, K32_ERR_CORRUPT, MOD,
		    "store: snapshot %s is corrupt at offset %zu (%s); nothing was dropped: "
		    "restore it from a backup or move the data directory away",
		    m->snap_path ? m->snap_path : "snapshot", off, fault);
	return s;
}

/* Whether a valid PUT/DELETE with a revision above rev starts anywhere in data[from..len). */
static bool valid_record_after(const uint8_t *data, size_t len, size_t from, uint64_t rev,
			       size_t *out_off)
{
	struct store_rec rec;
	size_t used;
	const char *fault;

	for (size_t off = from; off + STORE_REC_OVERHEAD <= len; off++) {
		if (data[off] != 'K' || get32(data + off) != STORE_REC_MAGIC)
			continue;
		if (store_rec_parse(data + off, len - off, &rec, &used, &fault) == K32_OK &&
		    rec.rev > rev && (rec.type == STORE_REC_PUT || rec.type == STORE_REC_DELETE)) {
			*out_off = off;
			return true;
		}
	}
	return false;
}

k32_status_t store_wal_replay(struct store_mem *m, const uint8_t *data, size_t len,
			      size_t *out_good, struct k32_err *err)
{
	const char *name = m->log_path ? m->log_path : "log";
	struct store_rec rec;
	size_t off = 0, used, next;
	const char *fault = NULL;
	k32_status_t s;

	m->log_hdr_found = false;
	m->tail_fault = NULL;
	while (off < len) {
		s = store_rec_parse(data + off, len - off, &rec, &used, &fault);
		if (s != K32_OK)
			break;
		if (off == 0 && rec.type == STORE_REC_LOG_BEGIN && rec.aux != 0) {
			m->log_hdr_found = true;
			m->log_hdr_seq = rec.aux;
			m->log_hdr_base = rec.rev;
			off += used;
			continue;
		}
		if (rec.type != STORE_REC_PUT && rec.type != STORE_REC_DELETE) {
			fault = "snapshot record in the log";
			break;
		}
		if (rec.rev <= m->rev) { /* covered by the snapshot */
			off += used;
			continue;
		}
		if (rec.rev != m->rev + 1) {
			fault = "revision gap";
			break;
		}
		s = apply(m, &rec, false, &fault, err);
		if (s == K32_ERR_CORRUPT)
			break;
		if (s != K32_OK)
			return s;
		m->rev = rec.rev;
		off += used;
		fault = NULL;
	}
	*out_good = off;
	if (off == len)
		return K32_OK;
	if (valid_record_after(data, len, off + 1, m->rev, &next))
		return k32_err_set(
		    err, K32_ERR_CORRUPT, MOD,
		    "store: %s: bad record at offset %zu (%s) but valid records follow at %zu; "
		    "refusing to drop acknowledged writes: repair or move the log away",
		    name, off, fault, next);
	m->tail_fault = fault ? fault : "bad record";
	return K32_OK;
}

/* A damaged or missing log means acknowledged writes are gone: refused unless the caller
 * accepts the loss, in which case it is logged as an error and the open goes on. */
static k32_status_t log_loss(struct store_mem *m, uint64_t since_rev, const char *what,
			     struct k32_err *err)
{
	/* names the file, not its path: the message must fit K32_ERR_MSG_LEN whole */
	if (!m->accept_log_loss)
		return k32_err_set(err, K32_ERR_CORRUPT, MOD,
				   "store: store.log %s: writes after rev %llu lost; refused: "
				   "restore it or set accept_log_loss (--store-accept-log-loss)",
				   what, (unsigned long long)since_rev);
	K32_LOGE(
	    MOD,
	    "store: accept_log_loss is set: %s %s; writes after rev %llu lost; opening at rev %llu",
	    m->log_path, what, (unsigned long long)since_rev, (unsigned long long)m->rev);
	return K32_OK;
}

/* Reads store.closed: *out_rev is the revision of the last clean close (0: none known). */
static k32_status_t read_mark(struct store_mem *m, uint64_t *out_rev, struct k32_err *err)
{
	const struct k32_platform_ops *ops = k32_plat();
	struct store_rec rec;
	const char *fault = NULL;
	uint8_t *data = NULL;
	size_t len = 0, used = 0;
	k32_status_t s;

	*out_rev = 0;
	s = ops->file_read_all(m->mark_path, &m->alloc, 4 * STORE_REC_OVERHEAD, &data, &len, err);
	if (s == K32_ERR_NOT_FOUND)
		return K32_OK;
	if (s == K32_ERR_OUT_OF_RANGE)
		return k32_err_set(err, K32_ERR_CORRUPT, MOD,
				   "store: %s is not a clean-close record (too long); move it away",
				   m->mark_path);
	if (s != K32_OK)
		return s;
	s = store_rec_parse(data, len, &rec, &used, &fault);
	if (s == K32_OK && (rec.type != STORE_REC_CLOSED || used != len))
		s = K32_ERR_CORRUPT;
	if (s == K32_OK)
		*out_rev = rec.rev;
	k32_free(&m->alloc, data, len + 1);
	if (s != K32_OK)
		return k32_err_set(err, K32_ERR_CORRUPT, MOD,
				   "store: %s is not a valid clean-close record (%s); move it away "
				   "if the log is known to be complete",
				   m->mark_path, fault ? fault : "wrong record");
	return K32_OK;
}

k32_status_t store_wal_load(struct store_mem *m, struct k32_err *err)
{
	const struct k32_platform_ops *ops = k32_plat();
	size_t snap_max = m->max_bytes + 4 * (size_t)m->max_objects + 5 * STORE_REC_OVERHEAD;
	size_t log_max =
	    4 * m->rotate_bytes + 2 * STORE_REC_OVERHEAD + K32_STORE_KEY_MAX + K32_STORE_VALUE_MAX;
	uint8_t *data = NULL;
	size_t len = 0, good = 0;
	uint64_t snap_rev = 0, expect_seq, closed_rev = 0;
	bool have_snap = false, have_log = false, rotate = false, lost = false;
	k32_status_t s;

	s = ops->file_read_all(m->snap_path, &m->alloc, snap_max, &data, &len, err);
	if (s == K32_OK) {
		s = store_wal_load_snapshot(m, data, len, err);
		k32_free(&m->alloc, data, len + 1);
		if (s != K32_OK)
			return s;
		have_snap = true;
		snap_rev = m->rev;
		K32_LOGI(MOD,
			 "store: loaded snapshot %s: %" PRIu32
			 " objects at revision %llu (log %llu)",
			 m->snap_path, m->idx_count, (unsigned long long)m->rev,
			 (unsigned long long)m->log_seq);
	} else if (s == K32_ERR_OUT_OF_RANGE) {
		return k32_err_set(err, K32_ERR_NO_RESOURCES, MOD,
				   "store: snapshot %s is larger than %zu bytes "
				   "(K32_STORE_MAX_BYTES); raise the limit to open it",
				   m->snap_path, snap_max);
	} else if (s != K32_ERR_NOT_FOUND) {
		return s;
	}
	expect_seq = m->log_seq; /* 0: no snapshot, or one written before LOG_BEGIN existed */

	data = NULL;
	len = 0;
	s = ops->file_read_all(m->log_path, &m->alloc, log_max, &data, &len, err);
	if (s == K32_OK) {
		have_log = true;
		s = store_wal_replay(m, data, len, &good, err);
		k32_free(&m->alloc, data, len + 1);
		if (s != K32_OK)
			return s;
	} else if (s == K32_ERR_OUT_OF_RANGE) {
		return k32_err_set(err, K32_ERR_NO_RESOURCES, MOD,
				   "store: log %s is larger than %zu bytes (4x "
				   "K32_STORE_LOG_ROTATE_BYTES); raise the limit to open it",
				   m->log_path, log_max);
	} else if (s != K32_ERR_NOT_FOUND) {
		return s;
	}

	/* Is this the log the snapshot expects? */
	s = K32_OK;
	if (!have_snap) {
		if (m->log_hdr_found && m->log_hdr_base > 0)
			return k32_err_set(err, K32_ERR_CORRUPT, MOD,
					   "store: %s is missing but %s continues from revision "
					   "%llu; restore the snapshot from a backup",
					   m->snap_path, m->log_path,
					   (unsigned long long)m->log_hdr_base);
		if (m->log_hdr_found)
			m->log_seq = m->log_hdr_seq;
		else
			rotate = true; /* a new directory, or files from before LOG_BEGIN */
	} else if (expect_seq == 0) {
		rotate = true; /* snapshot from before LOG_BEGIN: nothing to check against */
	} else if (!have_log) {
		s = log_loss(m, snap_rev, "is missing", err);
		lost = true;
	} else if (!m->log_hdr_found) {
		s = log_loss(m, snap_rev,
			     len == 0 ? "is empty" : "does not start with its LOG_BEGIN record",
			     err);
		lost = true;
	} else if (m->log_hdr_seq == expect_seq && m->log_hdr_base == snap_rev) {
		/* the expected log */
	} else if (m->log_hdr_seq + 1 == expect_seq && m->rev == snap_rev) {
		/* a rotation stopped after its snapshot: the old log's records are covered */
		K32_LOGW(MOD,
			 "store: %s is log %llu, covered by the snapshot of log %llu; "
			 "finishing that rotation",
			 m->log_path, (unsigned long long)m->log_hdr_seq,
			 (unsigned long long)expect_seq);
		m->log_seq = m->log_hdr_seq;
		rotate = true;
	} else {
		char what[128];

		snprintf(what, sizeof(what), "is log %llu, not log %llu of the snapshot",
			 (unsigned long long)m->log_hdr_seq, (unsigned long long)expect_seq);
		s = log_loss(m, snap_rev, what, err);
		lost = true;
	}
	if (s != K32_OK)
		return s;

	/* After a clean close, the log must reach the revision recorded then. */
	s = read_mark(m, &closed_rev, err);
	if (s != K32_OK)
		return s;
	if (closed_rev > m->rev) {
		char what[192];

		snprintf(what, sizeof(what),
			 "ends at rev %llu, closed at rev %llu (%llu revisions missing)",
			 (unsigned long long)m->rev, (unsigned long long)closed_rev,
			 (unsigned long long)(closed_rev - m->rev));
		s = log_loss(m, m->rev, what, err);
		if (s != K32_OK)
			return s;
		lost = true;
	} else if (m->tail_fault) {
		K32_LOGW(
		    MOD,
		    "store: %s: dropped %zu bytes at offset %zu (%s); no clean close after rev "
		    "%llu: taken as a write cut by a crash; at rev %llu",
		    m->log_path, len - good, good, m->tail_fault, (unsigned long long)closed_rev,
		    (unsigned long long)m->rev);
	}
	if (lost) {
		/* the old mark would refuse every later open: the loss is accepted now */
		s = ops->file_remove(m->mark_path, err);
		if (s != K32_OK)
			return s;
		rotate = true;
	}

	if (rotate) {
		/* a snapshot and a new log in the current format, consistent with each other */
		s = store_wal_rotate(m, err);
		if (s == K32_OK && m->log_stale)
			s = store_wal_log_replace(m, err);
		if (s != K32_OK)
			return s;
	} else {
		s = ops->file_open_append(m->log_path, &m->log, err);
		if (s != K32_OK)
			return s;
		if (good < len) {
			s = ops->file_truncate(m->log, good, err);
			if (s == K32_OK)
				s = ops->file_sync(m->log, err);
			if (s != K32_OK)
				return s;
		}
		m->log_bytes = good;
		m->synced_bytes = good;
	}
	m->opened = true;
	K32_LOGI(MOD,
		 "store: opened %s: %" PRIu32
		 " objects at revision %llu (log %llu, %zu bytes replayed)",
		 m->log_path, m->idx_count, (unsigned long long)m->rev,
		 (unsigned long long)m->log_seq, good);
	return K32_OK;
}
