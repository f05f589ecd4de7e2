/*
 * kobj_vmo.c - VMOs: bounded, contiguous byte buffers (no MMU, no mapping).
 *
 * The bytes come from the kobj region (K32_KOBJ_REGION_BYTES), allocated and zeroed whole at
 * create time (no lazy commit). Pods use vmo_read / vmo_write (one copy); native code with
 * MAP may borrow the base pointer, which pins the VMO (a reference) until vmo_return.
 * Copies run under the VMO's lock so concurrent readers and writers see whole operations.
 */
#include "kobj/kobj_int.h"

struct kobj_vmo {
	struct kobj_object hdr;
	struct kobj_core core;
	uint8_t *data; /* region block */
	uint32_t size; /* bytes */
	uint32_t pins; /* outstanding borrows */
};

#define VMO_RIGHTS                                                                                 \
	(KOBJ_RIGHTS_BASIC | KOBJ_RIGHTS_IO | KOBJ_RIGHT_MAP | KOBJ_RIGHT_GET_PROPERTY |           \
	 KOBJ_RIGHT_SET_PROPERTY | KOBJ_RIGHT_SIGNAL)

void kobj_vmo_setup(struct kobj_node *n, struct kobj_carve *c)
{
	size_t e = sizeof(struct kobj_vmo);
	kobj_pool_setup_at(&n->vmo_pool, kobj_carve(c, n->lim.vmos, e), e, n->lim.vmos,
			   "K32_KOBJ_MAX_VMOS", offsetof(struct kobj_vmo, core));
}

static inline struct kobj_vmo *vm(struct kobj_object *o)
{
	return (struct kobj_vmo *)o;
}

static void vmo_destroy(struct kobj_object *obj)
{
	struct kobj_node *n = obj->core->node;
	kobj_region_give(n, obj->core->acct, vm(obj)->data, vm(obj)->size);
	kobj_pool_put(&n->vmo_pool, obj);
}

static uint32_t vmo_capacity(struct kobj_object *obj)
{
	return vm(obj)->size;
}

const struct kobj_type_ops kobj_vmo_ops = {
    .destroy = vmo_destroy,
    .default_rights = VMO_RIGHTS,
    .user_signals = KOBJ_SIG_USER_ALL,
    .capacity = vmo_capacity,
};

k32_status_t kobj_vmo_create(struct kobj_owner *owner, uint64_t size, uint32_t opts,
			     kobj_handle_t *out)
{
	if (opts & ~KOBJ_VMO_PSRAM)
		return kobj_fail(owner, K32_ERR_INVALID_ARGS,
				 "%s: vmo_create opts 0x%" PRIx32 " unknown", owner->name, opts);
	if (size == 0 || size > owner->node->lim.region_bytes)
		return kobj_fail(
		    owner, K32_ERR_OUT_OF_RANGE,
		    "%s: VMO of %llu bytes: must be 1..K32_KOBJ_REGION_BYTES=%u of node "
		    "%s",
		    owner->name, (unsigned long long)size, (unsigned)owner->node->lim.region_bytes,
		    owner->node->name);
	struct kobj_account *acct;
	k32_status_t st = kobj_admit(owner, KOBJ_TYPE_VMO, 1, &acct);
	if (st != K32_OK)
		return st;
	struct kobj_vmo *v = kobj_pool_get(&owner->node->vmo_pool);
	if (!v)
		return kobj_pool_empty(owner, KOBJ_TYPE_VMO, acct);
	st = kobj_region_take(owner, (uint32_t)size, "a VMO", &v->data);
	if (st != K32_OK) {
		kobj_pool_put(&owner->node->vmo_pool, v);
		kobj_release(acct, KOBJ_CHARGE_OBJECTS + KOBJ_TYPE_VMO - 1u, 1u);
		return st;
	}
	kobj_core_init(&v->core, owner->node, 1u, acct);
	kobj_object_init(&v->hdr, KOBJ_TYPE_VMO, &v->core, 0);
	v->size = (uint32_t)size;
	v->pins = 0;
	return kobj_handle_install(owner, &v->hdr, VMO_RIGHTS, out);
}

static k32_status_t range(struct kobj_owner *owner, const struct kobj_vmo *v, uint64_t off,
			  uint64_t len)
{
	if (off > v->size || len > v->size - off)
		return kobj_fail(owner, K32_ERR_OUT_OF_RANGE,
				 "%s: VMO range %llu+%llu past its size %" PRIu32, owner->name,
				 (unsigned long long)off, (unsigned long long)len, v->size);
	return K32_OK;
}

k32_status_t kobj_vmo_read(struct kobj_owner *owner, kobj_handle_t h, void *buf, uint64_t off,
			   uint64_t len)
{
	struct kobj_object *obj = NULL;
	k32_status_t st = kobj_lookup(owner, h, KOBJ_TYPE_VMO, KOBJ_RIGHT_READ, &obj);
	if (st != K32_OK)
		return st;
	if (len && !buf)
		return K32_ERR_INVALID_ARGS;
	st = range(owner, vm(obj), off, len);
	if (st != K32_OK)
		return st;
	kobj_lock(&obj->core->lock);
	memcpy(buf, vm(obj)->data + off, (size_t)len);
	kobj_unlock(&obj->core->lock);
	return K32_OK;
}

k32_status_t kobj_vmo_write(struct kobj_owner *owner, kobj_handle_t h, const void *buf,
			    uint64_t off, uint64_t len)
{
	struct kobj_object *obj = NULL;
	k32_status_t st = kobj_lookup(owner, h, KOBJ_TYPE_VMO, KOBJ_RIGHT_WRITE, &obj);
	if (st != K32_OK)
		return st;
	if (len && !buf)
		return K32_ERR_INVALID_ARGS;
	st = range(owner, vm(obj), off, len);
	if (st != K32_OK)
		return st;
	kobj_lock(&obj->core->lock);
	memcpy(vm(obj)->data + off, buf, (size_t)len);
	kobj_unlock(&obj->core->lock);
	return K32_OK;
}

k32_status_t kobj_vmo_get_size(struct kobj_owner *owner, kobj_handle_t h, uint64_t *out_size)
{
	struct kobj_object *obj = NULL;
	k32_status_t st = kobj_lookup(owner, h, KOBJ_TYPE_VMO, 0, &obj);
	if (st != K32_OK)
		return st;
	*out_size = vm(obj)->size;
	return K32_OK;
}

k32_status_t kobj_vmo_borrow(struct kobj_owner *owner, kobj_handle_t h, void **out_ptr,
			     uint64_t *out_size)
{
	struct kobj_object *obj = NULL;
	k32_status_t st = kobj_lookup(owner, h, KOBJ_TYPE_VMO, KOBJ_RIGHT_MAP, &obj);
	if (st != K32_OK)
		return st;
	kobj_ref_other(obj);
	kobj_lock(&obj->core->lock);
	vm(obj)->pins++;
	kobj_unlock(&obj->core->lock);
	*out_ptr = vm(obj)->data;
	if (out_size)
		*out_size = vm(obj)->size;
	return K32_OK;
}

k32_status_t kobj_vmo_return(struct kobj_owner *owner, kobj_handle_t h)
{
	struct kobj_object *obj = NULL;
	k32_status_t st = kobj_lookup(owner, h, KOBJ_TYPE_VMO, KOBJ_RIGHT_MAP, &obj);
	if (st != K32_OK)
		return st;
	kobj_lock(&obj->core->lock);
	if (vm(obj)->pins == 0) {
		kobj_unlock(&obj->core->lock);
		return kobj_fail(owner, K32_ERR_BAD_STATE, "%s: vmo_return without a borrow",
				 owner->name);
	}
	vm(obj)->pins--;
	kobj_unlock(&obj->core->lock);
	kobj_unref(obj, KOBJ_REF_OTHER);
	return K32_OK;
}
