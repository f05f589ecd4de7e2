/*
 * wrt_ops.h - the opcode list of the Wasm runtime, written once as X-macros.
 *
 * Every Wasm numeric instruction appears exactly once below. The same lists generate the
 * internal opcode enum (wrt_int.h), the validator's type rules and the decoder's byte map
 * (wrt_compile.c), the interpreter's handlers and dispatch table (wrt_exec.c) and the op names
 * (for --count-ops and trap messages).
 *
 * Compiled code layout (one function = a run of 32-bit words):
 *
 *    31            16 15             0
 *   +----------------+----------------+
 *   | slot (dst/a)   | op (enum)      |  w0
 *   +----------------+----------------+
 *   | b slot         | a slot         |  w1 (binary ops), or a slot / immediate
 *   +----------------+----------------+
 *   | immediate (offset, constant...) |  w2.. as the op needs
 *   +---------------------------------+
 *
 * Operands are frame slots (64-bit, fp-relative): locals first, then the operand stack,
 * whose heights are all resolved at compile time. local.get and constants are folded into
 * the instructions that use them; a local.set after an op retargets the op's destination.
 * So `local.get a; local.get b; i32.add; local.set c` is one I32_ADD c, a, b (8 bytes).
 * Binary integer ops also come as NAME_I (w1: a slot, w2: 32-bit immediate, sign-extended
 * for i64). Branches carry their target as a word offset. Nothing is LEB-decoded at run
 * time.
 *
 * Numeric op formats: unary  w0 hi dst, w1 src; binary w0 hi dst, w1 a | b << 16;
 * load w0 hi dst, w1 address slot, w2 offset; store w0 hi address slot, w1 value slot,
 * w2 offset.
 *
 * WRT_NUMERIC(X): X(NAME, byte, signature, kind, in-type, out-type, expression)
 *   signature : validator rule, "ii:i" form (i i32, I i64, f f32, F f64)
 *   kind      : UN (unary), BIN (binary), UNF/BINF (float result: NaN canonicalised when the
 *               instance asks), DIVOP (integer division: hand-written, traps, has NAME_I),
 *               SPECIAL (hand-written unary handler in wrt_exec.c: traps)
 *   expression: the result in terms of a (first operand) and b (second operand)
 *
 * WRT_NUMERIC_FC(X): the same for the 0xFC prefix (saturating truncation); byte = sub-opcode.
 * WRT_MEMOPS(X): X(NAME, byte, signature, access bytes, natural alignment log2)
 *
 * Notes: integer arithmetic is done unsigned (wraps, never UB); shift counts are masked;
 * division, remainder and float-to-int truncation trap explicitly. Reserved bytes in the
 * 0x45..0xC4 range: none (the range is dense); 0xC5..0xCF, 0xD3..0xFB and 0xFD (SIMD) are
 * rejected by the decoder as "illegal opcode".
 */
#ifndef WRT_OPS_H
#define WRT_OPS_H

/* clang-format off */
#define WRT_NUMERIC(X) \
	X(I32_EQZ,   0x45, "i:i",  UN,  U32, U32, a == 0) \
	X(I32_EQ,    0x46, "ii:i", BIN, U32, U32, a == b) \
	X(I32_NE,    0x47, "ii:i", BIN, U32, U32, a != b) \
	X(I32_LT_S,  0x48, "ii:i", BIN, S32, U32, a < b) \
	X(I32_LT_U,  0x49, "ii:i", BIN, U32, U32, a < b) \
	X(I32_GT_S,  0x4A, "ii:i", BIN, S32, U32, a > b) \
	X(I32_GT_U,  0x4B, "ii:i", BIN, U32, U32, a > b) \
	X(I32_LE_S,  0x4C, "ii:i", BIN, S32, U32, a <= b) \
	X(I32_LE_U,  0x4D, "ii:i", BIN, U32, U32, a <= b) \
	X(I32_GE_S,  0x4E, "ii:i", BIN, S32, U32, a >= b) \
	X(I32_GE_U,  0x4F, "ii:i", BIN, U32, U32, a >= b) \
	X(I64_EQZ,   0x50, "I:i",  UN,  U64, U32, a == 0) \
	X(I64_EQ,    0x51, "II:i", BIN, U64, U32, a == b) \
	X(I64_NE,    0x52, "II:i", BIN, U64, U32, a != b) \
	X(I64_LT_S,  0x53, "II:i", BIN, S64, U32, a < b) \
	X(I64_LT_U,  0x54, "II:i", BIN, U64, U32, a < b) \
	X(I64_GT_S,  0x55, "II:i", BIN, S64, U32, a > b) \
	X(I64_GT_U,  0x56, "II:i", BIN, U64, U32, a > b) \
	X(I64_LE_S,  0x57, "II:i", BIN, S64, U32, a <= b) \
	X(I64_LE_U,  0x58, "II:i", BIN, U64, U32, a <= b) \
	X(I64_GE_S,  0x59, "II:i", BIN, S64, U32, a >= b) \
	X(I64_GE_U,  0x5A, "II:i", BIN, U64, U32, a >= b) \
	X(F32_EQ,    0x5B, "ff:i", BIN, F32, U32, a == b) \
	X(F32_NE,    0x5C, "ff:i", BIN, F32, U32, a != b) \
	X(F32_LT,    0x5D, "ff:i", BIN, F32, U32, a < b) \
	X(F32_GT,    0x5E, "ff:i", BIN, F32, U32, a > b) \
	X(F32_LE,    0x5F, "ff:i", BIN, F32, U32, a <= b) \
	X(F32_GE,    0x60, "ff:i", BIN, F32, U32, a >= b) \
	X(F64_EQ,    0x61, "FF:i", BIN, F64, U32, a == b) \
	X(F64_NE,    0x62, "FF:i", BIN, F64, U32, a != b) \
	X(F64_LT,    0x63, "FF:i", BIN, F64, U32, a < b) \
	X(F64_GT,    0x64, "FF:i", BIN, F64, U32, a > b) \
	X(F64_LE,    0x65, "FF:i", BIN, F64, U32, a <= b) \
	X(F64_GE,    0x66, "FF:i", BIN, F64, U32, a >= b) \
	X(I32_CLZ,   0x67, "i:i",  UN,  U32, U32, wrt_clz32(a)) \
	X(I32_CTZ,   0x68, "i:i",  UN,  U32, U32, wrt_ctz32(a)) \
	X(I32_POPCNT,0x69, "i:i",  UN,  U32, U32, (uint32_t)__builtin_popcount(a)) \
	X(I32_ADD,   0x6A, "ii:i", BIN, U32, U32, a + b) \
	X(I32_SUB,   0x6B, "ii:i", BIN, U32, U32, a - b) \
	X(I32_MUL,   0x6C, "ii:i", BIN, U32, U32, a * b) \
	X(I32_DIV_S, 0x6D, "ii:i", DIVOP, U32, U32, 0) \
	X(I32_DIV_U, 0x6E, "ii:i", DIVOP, U32, U32, 0) \
	X(I32_REM_S, 0x6F, "ii:i", DIVOP, U32, U32, 0) \
	X(I32_REM_U, 0x70, "ii:i", DIVOP, U32, U32, 0) \
	X(I32_AND,   0x71, "ii:i", BIN, U32, U32, a & b) \
	X(I32_OR,    0x72, "ii:i", BIN, U32, U32, a | b) \
	X(I32_XOR,   0x73, "ii:i", BIN, U32, U32, a ^ b) \
	X(I32_SHL,   0x74, "ii:i", BIN, U32, U32, a << (b & 31)) \
	X(I32_SHR_S, 0x75, "ii:i", BIN, U32, U32, wrt_shr_s32(a, b)) \
	X(I32_SHR_U, 0x76, "ii:i", BIN, U32, U32, a >> (b & 31)) \
	X(I32_ROTL,  0x77, "ii:i", BIN, U32, U32, wrt_rotl32(a, b)) \
	X(I32_ROTR,  0x78, "ii:i", BIN, U32, U32, wrt_rotr32(a, b)) \
	X(I64_CLZ,   0x79, "I:I",  UN,  U64, U64, wrt_clz64(a)) \
	X(I64_CTZ,   0x7A, "I:I",  UN,  U64, U64, wrt_ctz64(a)) \
	X(I64_POPCNT,0x7B, "I:I",  UN,  U64, U64, (uint64_t)__builtin_popcountll(a)) \
	X(I64_ADD,   0x7C, "II:I", BIN, U64, U64, a + b) \
	X(I64_SUB,   0x7D, "II:I", BIN, U64, U64, a - b) \
	X(I64_MUL,   0x7E, "II:I", BIN, U64, U64, a * b) \
	X(I64_DIV_S, 0x7F, "II:I", DIVOP, U64, U64, 0) \
	X(I64_DIV_U, 0x80, "II:I", DIVOP, U64, U64, 0) \
	X(I64_REM_S, 0x81, "II:I", DIVOP, U64, U64, 0) \
	X(I64_REM_U, 0x82, "II:I", DIVOP, U64, U64, 0) \
	X(I64_AND,   0x83, "II:I", BIN, U64, U64, a & b) \
	X(I64_OR,    0x84, "II:I", BIN, U64, U64, a | b) \
	X(I64_XOR,   0x85, "II:I", BIN, U64, U64, a ^ b) \
	X(I64_SHL,   0x86, "II:I", BIN, U64, U64, a << (b & 63)) \
	X(I64_SHR_S, 0x87, "II:I", BIN, U64, U64, wrt_shr_s64(a, b)) \
	X(I64_SHR_U, 0x88, "II:I", BIN, U64, U64, a >> (b & 63)) \
	X(I64_ROTL,  0x89, "II:I", BIN, U64, U64, wrt_rotl64(a, b)) \
	X(I64_ROTR,  0x8A, "II:I", BIN, U64, U64, wrt_rotr64(a, b)) \
	X(F32_ABS,   0x8B, "f:f",  UN,  F32, F32, wrt_f32_abs(a)) \
	X(F32_NEG,   0x8C, "f:f",  UN,  F32, F32, wrt_f32_neg(a)) \
	X(F32_CEIL,  0x8D, "f:f",  UNF, F32, F32, wrt_f32_ceil(a)) \
	X(F32_FLOOR, 0x8E, "f:f",  UNF, F32, F32, wrt_f32_floor(a)) \
	X(F32_TRUNC, 0x8F, "f:f",  UNF, F32, F32, wrt_f32_trunc(a)) \
	X(F32_NEAREST,0x90,"f:f",  UNF, F32, F32, wrt_f32_nearest(a)) \
	X(F32_SQRT,  0x91, "f:f",  UNF, F32, F32, sqrtf(a)) \
	X(F32_ADD,   0x92, "ff:f", BINF, F32, F32, a + b) \
	X(F32_SUB,   0x93, "ff:f", BINF, F32, F32, a - b) \
	X(F32_MUL,   0x94, "ff:f", BINF, F32, F32, a * b) \
	X(F32_DIV,   0x95, "ff:f", BINF, F32, F32, a / b) \
	X(F32_MIN,   0x96, "ff:f", BINF, F32, F32, wrt_f32_min(a, b)) \
	X(F32_MAX,   0x97, "ff:f", BINF, F32, F32, wrt_f32_max(a, b)) \
	X(F32_COPYSIGN,0x98,"ff:f", BIN, F32, F32, wrt_f32_copysign(a, b)) \
	X(F64_ABS,   0x99, "F:F",  UN,  F64, F64, wrt_f64_abs(a)) \
	X(F64_NEG,   0x9A, "F:F",  UN,  F64, F64, wrt_f64_neg(a)) \
	X(F64_CEIL,  0x9B, "F:F",  UNF, F64, F64, wrt_f64_ceil(a)) \
	X(F64_FLOOR, 0x9C, "F:F",  UNF, F64, F64, wrt_f64_floor(a)) \
	X(F64_TRUNC, 0x9D, "F:F",  UNF, F64, F64, wrt_f64_trunc(a)) \
	X(F64_NEAREST,0x9E,"F:F",  UNF, F64, F64, wrt_f64_nearest(a)) \
	X(F64_SQRT,  0x9F, "F:F",  UNF, F64, F64, sqrt(a)) \
	X(F64_ADD,   0xA0, "FF:F", BINF, F64, F64, a + b) \
	X(F64_SUB,   0xA1, "FF:F", BINF, F64, F64, a - b) \
	X(F64_MUL,   0xA2, "FF:F", BINF, F64, F64, a * b) \
	X(F64_DIV,   0xA3, "FF:F", BINF, F64, F64, a / b) \
	X(F64_MIN,   0xA4, "FF:F", BINF, F64, F64, wrt_f64_min(a, b)) \
	X(F64_MAX,   0xA5, "FF:F", BINF, F64, F64, wrt_f64_max(a, b)) \
	X(F64_COPYSIGN,0xA6,"FF:F", BIN, F64, F64, wrt_f64_copysign(a, b)) \
	X(I32_WRAP_I64,      0xA7, "I:i", UN, U64, U32, (uint32_t)a) \
	X(I32_TRUNC_F32_S,   0xA8, "f:i", SPECIAL, F32, U32, 0) \
	X(I32_TRUNC_F32_U,   0xA9, "f:i", SPECIAL, F32, U32, 0) \
	X(I32_TRUNC_F64_S,   0xAA, "F:i", SPECIAL, F64, U32, 0) \
	X(I32_TRUNC_F64_U,   0xAB, "F:i", SPECIAL, F64, U32, 0) \
	X(I64_EXTEND_I32_S,  0xAC, "i:I", UN, S32, U64, (uint64_t)(int64_t)a) \
	X(I64_EXTEND_I32_U,  0xAD, "i:I", UN, U32, U64, (uint64_t)a) \
	X(I64_TRUNC_F32_S,   0xAE, "f:I", SPECIAL, F32, U64, 0) \
	X(I64_TRUNC_F32_U,   0xAF, "f:I", SPECIAL, F32, U64, 0) \
	X(I64_TRUNC_F64_S,   0xB0, "F:I", SPECIAL, F64, U64, 0) \
	X(I64_TRUNC_F64_U,   0xB1, "F:I", SPECIAL, F64, U64, 0) \
	X(F32_CONVERT_I32_S, 0xB2, "i:f", UN, S32, F32, (float)a) \
	X(F32_CONVERT_I32_U, 0xB3, "i:f", UN, U32, F32, (float)a) \
	X(F32_CONVERT_I64_S, 0xB4, "I:f", UN, S64, F32, (float)a) \
	X(F32_CONVERT_I64_U, 0xB5, "I:f", UN, U64, F32, (float)a) \
	X(F32_DEMOTE_F64,    0xB6, "F:f", UNF, F64, F32, (float)a) \
	X(F64_CONVERT_I32_S, 0xB7, "i:F", UN, S32, F64, (double)a) \
	X(F64_CONVERT_I32_U, 0xB8, "i:F", UN, U32, F64, (double)a) \
	X(F64_CONVERT_I64_S, 0xB9, "I:F", UN, S64, F64, (double)a) \
	X(F64_CONVERT_I64_U, 0xBA, "I:F", UN, U64, F64, (double)a) \
	X(F64_PROMOTE_F32,   0xBB, "f:F", UNF, F32, F64, (double)a) \
	X(I32_REINTERPRET_F32, 0xBC, "f:i", UN, U32, U32, a) \
	X(I64_REINTERPRET_F64, 0xBD, "F:I", UN, U64, U64, a) \
	X(F32_REINTERPRET_I32, 0xBE, "i:f", UN, U32, U32, a) \
	X(F64_REINTERPRET_I64, 0xBF, "I:F", UN, U64, U64, a) \
	X(I32_EXTEND8_S,     0xC0, "i:i", UN, U32, U32, (uint32_t)(int32_t)(int8_t)a) \
	X(I32_EXTEND16_S,    0xC1, "i:i", UN, U32, U32, (uint32_t)(int32_t)(int16_t)a) \
	X(I64_EXTEND8_S,     0xC2, "I:I", UN, U64, U64, (uint64_t)(int64_t)(int8_t)a) \
	X(I64_EXTEND16_S,    0xC3, "I:I", UN, U64, U64, (uint64_t)(int64_t)(int16_t)a) \
	X(I64_EXTEND32_S,    0xC4, "I:I", UN, U64, U64, (uint64_t)(int64_t)(int32_t)a)

#define WRT_NUMERIC_FC(X) \
	X(I32_TRUNC_SAT_F32_S, 0x00, "f:i", UN, F32, U32, wrt_sat_i32_f32_s(a)) \
	X(I32_TRUNC_SAT_F32_U, 0x01, "f:i", UN, F32, U32, wrt_sat_i32_f32_u(a)) \
	X(I32_TRUNC_SAT_F64_S, 0x02, "F:i", UN, F64, U32, wrt_sat_i32_f64_s(a)) \
	X(I32_TRUNC_SAT_F64_U, 0x03, "F:i", UN, F64, U32, wrt_sat_i32_f64_u(a)) \
	X(I64_TRUNC_SAT_F32_S, 0x04, "f:I", UN, F32, U64, wrt_sat_i64_f32_s(a)) \
	X(I64_TRUNC_SAT_F32_U, 0x05, "f:I", UN, F32, U64, wrt_sat_i64_f32_u(a)) \
	X(I64_TRUNC_SAT_F64_S, 0x06, "F:I", UN, F64, U64, wrt_sat_i64_f64_s(a)) \
	X(I64_TRUNC_SAT_F64_U, 0x07, "F:I", UN, F64, U64, wrt_sat_i64_f64_u(a))

/*
 * Loads and stores: X(NAME, byte, signature, bytes accessed, max alignment log2, LD or ST).
 * Each load also has NAME_A (address = slot + 32-bit immediate, wrapping, then + offset:
 * a folded i32.add); each store has NAME_I (value immediate), NAME_A and NAME_AI.
 */
#define WRT_MEMOPS(X) \
	X(I32_LOAD,     0x28, "i:i", 4, 2, LD) \
	X(I64_LOAD,     0x29, "i:I", 8, 3, LD) \
	X(F32_LOAD,     0x2A, "i:f", 4, 2, LD) \
	X(F64_LOAD,     0x2B, "i:F", 8, 3, LD) \
	X(I32_LOAD8_S,  0x2C, "i:i", 1, 0, LD) \
	X(I32_LOAD8_U,  0x2D, "i:i", 1, 0, LD) \
	X(I32_LOAD16_S, 0x2E, "i:i", 2, 1, LD) \
	X(I32_LOAD16_U, 0x2F, "i:i", 2, 1, LD) \
	X(I64_LOAD8_S,  0x30, "i:I", 1, 0, LD) \
	X(I64_LOAD8_U,  0x31, "i:I", 1, 0, LD) \
	X(I64_LOAD16_S, 0x32, "i:I", 2, 1, LD) \
	X(I64_LOAD16_U, 0x33, "i:I", 2, 1, LD) \
	X(I64_LOAD32_S, 0x34, "i:I", 4, 2, LD) \
	X(I64_LOAD32_U, 0x35, "i:I", 4, 2, LD) \
	X(I32_STORE,    0x36, "ii:", 4, 2, ST) \
	X(I64_STORE,    0x37, "iI:", 8, 3, ST) \
	X(F32_STORE,    0x38, "if:", 4, 2, ST) \
	X(F64_STORE,    0x39, "iF:", 8, 3, ST) \
	X(I32_STORE8,   0x3A, "ii:", 1, 0, ST) \
	X(I32_STORE16,  0x3B, "ii:", 2, 1, ST) \
	X(I64_STORE8,   0x3C, "iI:", 1, 0, ST) \
	X(I64_STORE16,  0x3D, "iI:", 2, 1, ST) \
	X(I64_STORE32,  0x3E, "iI:", 4, 2, ST)

/*
 * Fused compare-and-branch on i32 (i32.cmp + br_if, or if): X(NAME, C operator, operand type,
 * inverse NAME). Each gives BR_<NAME> (two slots) and BR_<NAME>_I (slot and immediate),
 * ADDBR_<NAME>[_I] (add an immediate, compare, branch), RADDBR_<NAME>[_I] (the same adding a
 * slot: w1 is a slot) and SELECT_<NAME>[_I] (i32.cmp + select:
 * w0 hi dst; w1 a | b << 16; w2 compared slot; w3 other slot or immediate).
 */
#define WRT_CMP32(X) \
	X(EQ,   ==, U32, NE) \
	X(NE,   !=, U32, EQ) \
	X(LT_S, <,  S32, GE_S) \
	X(LT_U, <,  U32, GE_U) \
	X(GT_S, >,  S32, LE_S) \
	X(GT_U, >,  U32, LE_U) \
	X(LE_S, <=, S32, GT_S) \
	X(LE_U, <=, U32, GT_U) \
	X(GE_S, >=, S32, LT_S) \
	X(GE_U, >=, U32, LT_U)

/*
 * Internal ops with no single Wasm byte (control, variables, calls, tables, bulk memory).
 * X(NAME, word layout). "w0 hi" is the upper 16 bits of the op word; slots are frame slots.
 * Bulk ops take their operands from consecutive slots starting at base.
 */
#define WRT_INTERNAL(X) \
	X(UNREACHABLE,   "trap") \
	X(GAS,           "w1: cost of the straight-line region that starts here") \
	X(BR,            "w1: offset (from w1); w2: gas charged when taken (loop back-edge)") \
	X(BR_MOVE,       "w0 hi: count; w1: offset; w2: gas; w3: dst | src << 16") \
	X(BR_SET,        "w0 hi: dst; w1: offset; w2: gas; w3: value: dst = value, jump") \
	X(BR_SETL,       "w0 hi: dst; w1: offset; w2: gas; w3: src slot: dst = src, jump") \
	X(BR_IF,         "w0 hi: cond; w1: offset; w2: gas") \
	X(BR_IF_MOVE,    "w0 hi: cond; w1: offset; w2: gas; w3: dst | src << 16; w4: count") \
	X(BR_IFZ,        "w0 hi: cond; w1: offset: jump when zero (if)") \
	X(BR_TABLE,      "w0 hi: index; w1: n; w2: arity | src << 16; n+1 x (offset, gas, dst)") \
	X(RETURN,        "w0 hi: count; w1: slot of the first result") \
	X(CALL,          "w0 hi: base slot of the args and results; w1: function") \
	X(CALL_INDIRECT, "w0 hi: base; w1: type; w2: table; w3: index slot") \
	X(COPY,          "w0 hi: dst; w1: src") \
	X(SELECT,        "w0 hi: dst; w1: a | b << 16; w2: cond") \
	X(GLOBAL_GET,    "w0 hi: dst; w1: global") \
	X(GLOBAL_SET,    "w0 hi: src; w1: global") \
	X(CONST32,       "w0 hi: dst; w1: value, zero-extended") \
	X(CONST64,       "w0 hi: dst; w1: low word; w2: high word") \
	X(MEMORY_SIZE,   "w0 hi: dst") \
	X(MEMORY_GROW,   "w0 hi: dst; w1: delta slot") \
	X(MEMORY_INIT,   "w0 hi: base (dst, src, n); w1: data segment") \
	X(DATA_DROP,     "w1: data segment") \
	X(MEMORY_COPY,   "w0 hi: base (dst, src, n)") \
	X(MEMORY_FILL,   "w0 hi: base (dst, value, n)") \
	X(TABLE_GET,     "w0 hi: base (index -> ref); w1: table") \
	X(TABLE_SET,     "w0 hi: base (index, ref); w1: table") \
	X(TABLE_INIT,    "w0 hi: base (dst, src, n); w1: elem segment; w2: table") \
	X(ELEM_DROP,     "w1: elem segment") \
	X(TABLE_COPY,    "w0 hi: base (dst, src, n); w1: dst table; w2: src table") \
	X(TABLE_GROW,    "w0 hi: base (ref, n -> old size or -1); w1: table") \
	X(TABLE_SIZE,    "w0 hi: dst; w1: table") \
	X(TABLE_FILL,    "w0 hi: base (index, ref, n); w1: table") \
	X(REF_IS_NULL,   "w0 hi: dst; w1: src") \
	X(REF_FUNC,      "w0 hi: dst; w1: function") \
	X(LD8BR_EQ,      "i32.load8_u + br_if on == imm: w0 hi dst; w1 address slot; w2 offset; w3 imm; w4 branch offset; w5 gas") \
	X(LD8BR_NE,      "the same on !=") \
	X(LD8BR_EQ_A,    "LD8BR_EQ with an added immediate: w3 add; w4 imm; w5 branch offset; w6 gas") \
	X(LD8BR_NE_A,    "the same on !=") \
	X(I32_RSUB_I,    "w0 hi: dst; w1: src slot; w2: imm: dst = imm - src (i32.sub from a constant)") \
	X(ADD2_I,        "w0 hi: x; w1: k1; w2: y; w3: k2: x += k1, then y += k2 (two i32 increments)") \
	X(FBR_F32,       "f32 compare + br_if: w0 hi a; w1 b slot; w2 cond (WRT_FC_*); w3 offset; w4 gas") \
	X(FBR_F32_I,     "the same with w1 the f32 bits of b") \
	X(FBR_F64,       "f64 compare + br_if: w0 hi a; w1 b slot; w2 cond; w3 offset; w4 gas") \
	X(FBR_F64_I,     "the same with b in w1 (low), w2 (high); w3 cond; w4 offset; w5 gas")
/* clang-format on */

#endif /* WRT_OPS_H */
