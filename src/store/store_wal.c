/*
 * store_wal.c - the embedded store's log and snapshots: record codec, append + fsync,
 * load (snapshot, then replay with tail repair) and rotation.
 *
 * Files in the data directory:
 *   store.log   records appended one per write, fsynced before the write is acknowledged
 *   store.snap  every live object at one revision, replaced atomically (write a temporary,
 *               fsync, rename, fsync the directory: the platform's file_write_atomic)
 *
 * Record (all integers little-endian):
 *
 *   offset size field
 *        0    4 magic    "K32L" (0x4C32334B)
 *        4    4 len      bytes of the payload that follows the 12-byte header (24 + key + value)
 *        8    4 crc      k32_crc32 over the 4 len bytes, then the whole payload
 *       12    1 type     1 PUT, 2 DELETE, 3 SNAP_BEGIN, 4 SNAP_END
 *       13    1 flags    0 (anything else is corrupt)
 *       14    2 key_len  bytes of the key (<= K32_STORE_KEY_MAX)
 *       16    4 val_len  bytes of the value (<= K32_STORE_VALUE_MAX)
 *       20    8 rev      PUT/DELETE: the write's revision (in a snapshot: the object's
 *                        mod_rev); SNAP_*: the snapshot's revision
 *       28    8 aux      PUT: create_rev; DELETE: 0; SNAP_*: number of objects
 *       36      key, then value (a PUT's value is the stored JSON text, revision stamped)
 *
 * The log holds PUT and DELETE records with revisions rising by exactly one. A snapshot is
 * SNAP_BEGIN, one PUT per object in strictly increasing key order, SNAP_END (same rev and
 * count), and nothing after.
 *
 * Crash safety of every step:
 *  - append: a crash mid-record leaves a torn tail; on open it fails its length or CRC
 *    check, is reported (k32_log WARN: file, offset, fault, bytes dropped) and truncated.
 *    It was never acknowledged: acknowledgement comes after file_sync. A failed append or
 *    sync truncates the file back to its previous size before the write returns K32_ERR_IO,
 *    so no garbage sits between acknowledged records; if that truncation fails too the store
 *    refuses further writes (BAD_STATE) rather than append after garbage.
 *  - rotation: the snapshot (covering revision R = the last logged record) is written
 *    atomically first, then the log is truncated to 0. A crash between the two leaves log
 *    records <= R, which replay skips as already covered by the snapshot.
 *  - open: load the snapshot (if any; a snapshot that fails any check is an error, never
 *    dropped), then replay records with rev > snapshot rev. A bad record followed by a valid
 *    later record is not a torn tail but damage in the middle: open fails with CORRUPT
 *    naming both offsets instead of silently dropping acknowledged writes.
 *
 * Context: called with the backend's write_mu held (or single-threaded during open).
 */
#include "store/store_int.h"

#include <inttypes.h>
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
	if (out->type < STORE_REC_PUT || out->type > STORE_REC_SNAP_END) {
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
	if (s == K32_OK)
		s = ops->file_sync(m->log, &e);
	if (s == K32_OK) {
		m->log_bytes += n + val_len;
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

k32_status_t store_wal_rotate(struct store_mem *m, struct k32_err *err)
{
	const struct k32_platform_ops *ops = k32_plat();
	size_t size = 2 * (size_t)STORE_REC_OVERHEAD, off = 0;
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
	if (ops->file_truncate(m->log, 0, &e) != K32_OK || ops->file_sync(m->log, &e) != K32_OK) {
		/* harmless: replay skips records the snapshot covers; retried on the next write */
		K32_LOGW(MOD, "store: snapshot at revision %llu written but %s not emptied: %s",
			 (unsigned long long)m->rev, m->log_path, e.msg);
		return K32_OK;
	}
	m->log_bytes = 0;
	return K32_OK;
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
	s = store_mem_reserve(m, err);
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

	while (off < len) {
		s = store_rec_parse(data + off, len - off, &rec, &used, &fault);
		if (s != K32_OK)
			break;
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
	K32_LOGW(MOD,
		 "store: %s: dropping %zu bytes at offset %zu of %zu: %s (torn or corrupt tail of "
		 "an unacknowledged write); state is revision %llu",
		 name, len - off, off, len, fault, (unsigned long long)m->rev);
	return K32_OK;
}

k32_status_t store_wal_load(struct store_mem *m, struct k32_err *err)
{
	const struct k32_platform_ops *ops = k32_plat();
	size_t snap_max = m->max_bytes + 4 * (size_t)m->max_objects + 4 * STORE_REC_OVERHEAD;
	size_t log_max =
	    4 * m->rotate_bytes + STORE_REC_OVERHEAD + K32_STORE_KEY_MAX + K32_STORE_VALUE_MAX;
	uint8_t *data = NULL;
	size_t len = 0, good = 0;
	k32_status_t s;

	s = ops->file_read_all(m->snap_path, &m->alloc, snap_max, &data, &len, err);
	if (s == K32_OK) {
		s = store_wal_load_snapshot(m, data, len, err);
		k32_free(&m->alloc, data, len + 1);
		if (s != K32_OK)
			return s;
		K32_LOGI(MOD, "store: loaded snapshot %s: %" PRIu32 " objects at revision %llu",
			 m->snap_path, m->idx_count, (unsigned long long)m->rev);
	} else if (s == K32_ERR_OUT_OF_RANGE) {
		return k32_err_set(err, K32_ERR_NO_RESOURCES, MOD,
				   "store: snapshot %s is larger than %zu bytes "
				   "(K32_STORE_MAX_BYTES); raise the limit to open it",
				   m->snap_path, snap_max);
	} else if (s != K32_ERR_NOT_FOUND) {
		return s;
	}

	data = NULL;
	s = ops->file_read_all(m->log_path, &m->alloc, log_max, &data, &len, err);
	if (s == K32_OK) {
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
	} else {
		len = 0;
	}
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
	K32_LOGI(MOD,
		 "store: opened %s: %" PRIu32 " objects at revision %llu (%zu log bytes replayed)",
		 m->log_path, m->idx_count, (unsigned long long)m->rev, good);
	return K32_OK;
}
