/*
 * The slice of the Solana program ABI this program uses, written for upstream clang's BPF target
 * (no Solana SDK available): types, the serialized input format, syscalls and the C CPI structs.
 * Layouts follow the runtime's aligned serialization (loader v2/v3) and its C CPI interface.
 */
#ifndef ROUTER_SOL_H
#define ROUTER_SOL_H

typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;
typedef long long i64;
typedef _Bool bool;
#define true 1
#define false 0
#define NULL ((void *)0)
#define U64_MAX 0xffffffffffffffffULL

#define SUCCESS 0
/* The heap the runtime maps for every program (32 KiB by default). */
#define HEAP_START 0x300000000ULL
/* Bytes an account may grow by inside one instruction; the serializer reserves them after data. */
#define MAX_PERMITTED_DATA_INCREASE 10240
#define NON_DUP_MARKER 0xff

typedef struct {
  u8 x[32];
} Pubkey;

/* SolAccountInfo: what sol_invoke_signed_c expects for each account passed to a CPI. */
typedef struct {
  Pubkey *key;
  u64 *lamports;
  u64 data_len;
  u8 *data;
  Pubkey *owner;
  u64 rent_epoch;
  bool is_signer;
  bool is_writable;
  bool executable;
} AccountInfo;

typedef struct {
  const Pubkey *pubkey;
  bool is_writable;
  bool is_signer;
} AccountMeta;

typedef struct {
  const Pubkey *program_id;
  const AccountMeta *accounts;
  u64 account_len;
  const u8 *data;
  u64 data_len;
} Instruction;

typedef struct {
  const u8 *addr;
  u64 len;
} SignerSeed;

typedef struct {
  const SignerSeed *addr;
  u64 len;
} SignerSeeds;

typedef struct {
  u64 slot;
  i64 epoch_start_timestamp;
  u64 epoch;
  u64 leader_schedule_epoch;
  i64 unix_timestamp;
} Clock;

typedef struct {
  u64 lamports_per_byte_year;
  u64 exemption_threshold_f64_bits; /* an f64; the BPF target has no floating point */
  u8 burn_percent;
  u8 pad[7];
} Rent;

/* Syscalls (resolved by name by the loader). */
extern void sol_log_(const char *message, u64 len);
extern void sol_log_64_(u64 a, u64 b, u64 c, u64 d, u64 e);
extern void sol_log_pubkey(const Pubkey *key);
extern u64 sol_invoke_signed_c(const Instruction *instruction, const AccountInfo *account_infos,
                               u64 account_infos_len, const SignerSeeds *signers_seeds,
                               u64 signers_seeds_len);
extern u64 sol_create_program_address(const SignerSeed *seeds, u64 seeds_len, const Pubkey *program_id,
                                      Pubkey *address);
extern u64 sol_get_clock_sysvar(Clock *clock);
extern u64 sol_get_rent_sysvar(Rent *rent);
extern void sol_memset_(void *dst, u8 value, u64 len);
extern void sol_set_return_data(const u8 *data, u64 len);

#define sol_log(literal) sol_log_((literal), sizeof(literal) - 1)

/* Reads of the serialized input; the buffer is 8-byte aligned where the ABI promises it. */
static inline u64 load_u64(const u8 *p) { return *(const u64 *)p; }

static inline bool key_eq(const Pubkey *a, const Pubkey *b) {
  const u64 *x = (const u64 *)a;
  const u64 *y = (const u64 *)b;
  return x[0] == y[0] && x[1] == y[1] && x[2] == y[2] && x[3] == y[3];
}

static inline bool key_is_zero(const Pubkey *a) {
  const u64 *x = (const u64 *)a;
  return (x[0] | x[1] | x[2] | x[3]) == 0;
}

static inline void key_copy(Pubkey *dst, const Pubkey *src) {
  u64 *d = (u64 *)dst;
  const u64 *s = (const u64 *)src;
  d[0] = s[0];
  d[1] = s[1];
  d[2] = s[2];
  d[3] = s[3];
}

/* The account's current data length: the serialized length in front of the data, which the
 * runtime keeps up to date across CPIs (the AccountInfo copy is not). */
static inline u64 account_data_len(const AccountInfo *a) { return load_u64(a->data - 8); }

#define MAX_ACCOUNTS 40

typedef struct {
  AccountInfo accounts[MAX_ACCOUNTS];
  /* NON_DUP_MARKER, or the index of the account this one repeats */
  u8 dup_of[MAX_ACCOUNTS];
  u64 account_count;
  const u8 *data;
  u64 data_len;
  const Pubkey *program_id;
} Input;

/* Walks the serialized input: accounts (duplicates point at their first occurrence), the
 * instruction data and the program id. Returns false when there are more accounts than fit. */
static bool deserialize(u8 *input, Input *out) {
  u64 count = load_u64(input);
  input += 8;
  if (count > MAX_ACCOUNTS) return false;
  out->account_count = count;
  for (u64 i = 0; i < count; i++) {
    u8 dup = input[0];
    if (dup != NON_DUP_MARKER) {
      out->accounts[i] = out->accounts[dup];
      out->dup_of[i] = dup;
      input += 8;
      continue;
    }
    AccountInfo *a = &out->accounts[i];
    out->dup_of[i] = NON_DUP_MARKER;
    a->is_signer = input[1];
    a->is_writable = input[2];
    a->executable = input[3];
    input += 8; /* marker, three flags, four bytes of padding */
    a->key = (Pubkey *)input;
    input += 32;
    a->owner = (Pubkey *)input;
    input += 32;
    a->lamports = (u64 *)input;
    input += 8;
    a->data_len = load_u64(input);
    input += 8;
    a->data = input;
    input += a->data_len + MAX_PERMITTED_DATA_INCREASE;
    input = (u8 *)(((u64)input + 7) & ~7ULL);
    a->rent_epoch = load_u64(input);
    input += 8;
  }
  out->data_len = load_u64(input);
  input += 8;
  out->data = input;
  input += out->data_len;
  out->program_id = (const Pubkey *)input;
  return true;
}

#endif
