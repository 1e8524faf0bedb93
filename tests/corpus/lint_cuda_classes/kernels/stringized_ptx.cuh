// Shuffle-and-combine helpers stamped out by a macro whose PTX is built from
// the macro's parameters with the stringizing operator (`#kind`, `#reg`).
#pragma once

#define DEFINE_XCHG_ADD(name, kind, reg, ctype) \
__device__ inline ctype xchg_add_##name(ctype v, int delta) { \
  ctype out = v; \
  asm( /* expect: PG601 */ \
    "{ .reg ."#kind" t;" \
    "shfl.sync.bfly.b32 t, %1, %2, 0x1f, -1;" \
    "add."#kind" %0, t, %1; }" \
    : "="#reg(out) : #reg(v), "r"(delta)); \
  return out; \
}

DEFINE_XCHG_ADD(i32, s32, r, int)
DEFINE_XCHG_ADD(f32, f32, f, float)

// stringizing with no assembly in the body: a name table, nothing to report
#define NAME_OF(field) #field
#define FIELD_ENTRY(field, off) { #field, off }
