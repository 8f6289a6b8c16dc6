/*
 * Transfer Router on-chain program: custody of a route's tokens, hop execution on schedule by the
 * route's keeper, screening deposit, rescue and rent reclaim. See docs/program.md for the design.
 *
 * Conventions: every handler validates accounts (owner, signer, writability, address) before it
 * changes anything, returns a distinct error code from errors.h, performs its CPIs before any
 * direct lamport move (the runtime checks lamport balance across CPI boundaries) and reports
 * amounts through return data.
 */
#include "errors.h"
#include "sol.h"
#include "state.h"

static const Pubkey TOKEN_PROGRAM_ID = {{0x06, 0xdd, 0xf6, 0xe1, 0xd7, 0x65, 0xa1, 0x93, 0xd9, 0xcb, 0xe1,
                                         0x46, 0xce, 0xeb, 0x79, 0xac, 0x1c, 0xb4, 0x85, 0xed, 0x5f, 0x5b,
                                         0x37, 0x91, 0x3a, 0x8c, 0xf5, 0x85, 0x7e, 0xff, 0x00, 0xa9}};
static const Pubkey UPGRADEABLE_LOADER_ID = {{0x02, 0xa8, 0xf6, 0x91, 0x4e, 0x88, 0xa1, 0xb0, 0xe2, 0x10, 0x15,
                                              0x3e, 0xf7, 0x63, 0xae, 0x2b, 0x00, 0xc2, 0xb9, 0x3d, 0x16, 0xc1,
                                              0x24, 0xd2, 0xc0, 0x53, 0x7a, 0x10, 0x04, 0x80, 0x00, 0x00}};
static const Pubkey SYSTEM_PROGRAM_ID = {{0}};
/* The native mint (wrapped SOL), So11111111111111111111111111111111111111112: a route on it
 * delivers native lamports to the recipient's wallet at settlement. */
static const Pubkey NATIVE_MINT_ID = {{0x06, 0x9b, 0x88, 0x57, 0xfe, 0xab, 0x81, 0x84, 0xfb, 0x68, 0x7f,
                                       0x63, 0x46, 0x18, 0xc0, 0x35, 0xda, 0xc4, 0x39, 0xdc, 0x1a, 0xeb,
                                       0x3b, 0x55, 0x98, 0xa0, 0xf0, 0x00, 0x00, 0x00, 0x00, 0x01}};

#define IX_INIT_CONFIG 0
#define IX_UPDATE_CONFIG 1
#define IX_INIT_ORCHESTRATOR 2
#define IX_CREATE_ROUTE 3
#define IX_ADD_HOPS 4
#define IX_INIT_STEPS 5
#define IX_SCREEN_ROUTE 6
#define IX_EXECUTE_STEP 7
#define IX_MARK_FAILED 8
#define IX_RESCUE 9
#define IX_RECLAIM 10
#define IX_CLOSE_ORCHESTRATOR 11
#define IX_WITHDRAW_LAMPORTS 12
#define IX_WITHDRAW_TOKENS 13

#define VERDICT_VERIFIED 1
#define VERDICT_FLAGGED 2
#define RECOVER_CLOSE_ORCHESTRATOR 1

/* Everything the handlers share lives at the start of the heap (no globals in sBPF). */
typedef struct {
  Input in;
  Clock clock;
  Rent rent;
} Ctx;

#define FAIL(code, message)  \
  do {                       \
    sol_log(message);        \
    return (code);           \
  } while (0)

#define TRY(expr)            \
  do {                       \
    u64 _err = (expr);       \
    if (_err != SUCCESS) {   \
      return _err;           \
    }                        \
  } while (0)

/* ---- checked arithmetic ---- */

static inline bool add_ok(u64 a, u64 b, u64 *out) {
  u64 r = a + b;
  if (r < a) return false;
  *out = r;
  return true;
}

/* Written with 32-bit halves: clang turns the usual division check into __multi3, which the BPF
 * target cannot call. */
static bool mul_ok(u64 a, u64 b, u64 *out) {
  u64 a_hi = a >> 32, a_lo = a & 0xffffffffULL, b_hi = b >> 32, b_lo = b & 0xffffffffULL;
  if (a_hi != 0 && b_hi != 0) return false;
  u64 cross = a_hi * b_lo + a_lo * b_hi; /* one term is zero, so this cannot wrap */
  if ((cross >> 32) != 0) return false;
  u64 low = a_lo * b_lo;
  u64 result = low + (cross << 32);
  if (result < low) return false;
  *out = result;
  return true;
}

/* amount * bps / 10000, rounded up or down, exact without 128-bit math: splitting amount by the
 * denominator keeps every product below amount (bps <= 10000). */
static u64 mul_bps(u64 amount, u64 bps, bool round_up) {
  u64 whole = amount / BPS_DENOMINATOR;
  u64 rest = amount % BPS_DENOMINATOR;
  u64 part = rest * bps;
  u64 result = whole * bps + part / BPS_DENOMINATOR;
  if (round_up && part % BPS_DENOMINATOR != 0) result += 1;
  return result;
}

/* The rent-exempt minimum for data_len bytes: (128 + len) * lamports_per_byte_year * threshold,
 * with the f64 threshold applied in integers (rounded up, so never below the runtime's figure). */
static u64 rent_minimum(Ctx *c, u64 data_len, u64 *out) {
  if (sol_get_rent_sysvar(&c->rent) != SUCCESS) FAIL(E_INVALID_RENT_SYSVAR, "rent sysvar");
  u64 base;
  if (!mul_ok(128 + data_len, c->rent.lamports_per_byte_year, &base)) return E_ARITHMETIC_OVERFLOW;
  u64 bits = c->rent.exemption_threshold_f64_bits;
  u64 exponent = (bits >> 52) & 0x7ff;
  if ((bits >> 63) != 0 || exponent == 0 || exponent == 0x7ff) FAIL(E_INVALID_RENT_SYSVAR, "rent threshold");
  u64 mantissa = (bits & ((1ULL << 52) - 1)) | (1ULL << 52);
  i64 shift = (i64)exponent - 1075;
  /* Drop the mantissa's trailing zeros (a power-of-two threshold such as 2.0 has 52) by halving
   * the step each time: six tests instead of a loop per bit. */
  for (u64 step = 32; step != 0; step >>= 1) {
    if ((mantissa & ((1ULL << step) - 1)) == 0) {
      mantissa >>= step;
      shift += (i64)step;
    }
  }
  u64 product;
  if (!mul_ok(base, mantissa, &product)) return E_ARITHMETIC_OVERFLOW;
  if (shift >= 0) {
    if (shift > 63 || product > (U64_MAX >> shift)) return E_ARITHMETIC_OVERFLOW;
    *out = product << shift;
    return SUCCESS;
  }
  u64 right = (u64)(-shift);
  if (right > 63) FAIL(E_INVALID_RENT_SYSVAR, "rent threshold");
  u64 value = product >> right;
  if ((product & ((1ULL << right) - 1)) != 0) value += 1;
  *out = value;
  return SUCCESS;
}

/* ---- account checks ---- */

static u64 need_accounts(Ctx *c, u64 n) {
  if (c->in.account_count < n) FAIL(E_NOT_ENOUGH_ACCOUNTS, "not enough accounts");
  return SUCCESS;
}

static u64 need_signer(const AccountInfo *a) {
  if (!a->is_signer) {
    sol_log_pubkey(a->key);
    FAIL(E_MISSING_SIGNATURE, "missing signature");
  }
  return SUCCESS;
}

static u64 need_writable(const AccountInfo *a) {
  if (!a->is_writable) {
    sol_log_pubkey(a->key);
    FAIL(E_ACCOUNT_NOT_WRITABLE, "account not writable");
  }
  return SUCCESS;
}

/* A fresh address: owned by the System Program with no data (it may already hold lamports). */
static u64 need_empty(const AccountInfo *a) {
  if (!key_eq(a->owner, &SYSTEM_PROGRAM_ID) || account_data_len(a) != 0) {
    sol_log_pubkey(a->key);
    FAIL(E_ACCOUNT_ALREADY_INITIALIZED, "account already initialized");
  }
  return SUCCESS;
}

static u64 need_key(const AccountInfo *a, const Pubkey *expected, u64 code) {
  if (!key_eq(a->key, expected)) {
    sol_log_pubkey(a->key);
    sol_log("unexpected account");
    return code;
  }
  return SUCCESS;
}

static u64 need_pda(const SignerSeed *seeds, u64 count, const Pubkey *program_id, const Pubkey *expected) {
  Pubkey derived;
  if (sol_create_program_address(seeds, count, program_id, &derived) != SUCCESS ||
      !key_eq(&derived, expected)) {
    sol_log_pubkey(expected);
    FAIL(E_INVALID_PDA, "address does not match seeds");
  }
  return SUCCESS;
}

/* An initialised SPL Token account of the given mint (and owner, when one is given). */
static u64 need_token_account(const AccountInfo *a, const Pubkey *mint, const Pubkey *owner, u64 code) {
  if (!key_eq(a->owner, &TOKEN_PROGRAM_ID) || account_data_len(a) != TOKEN_ACCOUNT_SIZE ||
      a->data[TOKEN_ACCOUNT_STATE] == 0) {
    sol_log_pubkey(a->key);
    sol_log("not an initialized token account");
    return code;
  }
  if (!key_eq((const Pubkey *)(a->data + TOKEN_ACCOUNT_MINT), mint)) {
    sol_log_pubkey(a->key);
    sol_log("token account of another mint");
    return code;
  }
  if (owner != NULL && !key_eq((const Pubkey *)(a->data + TOKEN_ACCOUNT_OWNER), owner)) {
    sol_log_pubkey(a->key);
    sol_log("token account of another owner");
    return code;
  }
  return SUCCESS;
}

static u64 load_config(Ctx *c, const AccountInfo *a, Config **out) {
  if (!key_eq(a->owner, c->in.program_id)) FAIL(E_INVALID_CONFIG, "config not owned by program");
  if (account_data_len(a) != CONFIG_SIZE || ((Config *)a->data)->tag != CONFIG_TAG) {
    FAIL(E_INVALID_CONFIG, "config malformed");
  }
  *out = (Config *)a->data;
  return SUCCESS;
}

static u64 load_route(Ctx *c, const AccountInfo *a, Route **out) {
  if (!key_eq(a->owner, c->in.program_id)) FAIL(E_INVALID_ACCOUNT_OWNER, "route not owned by program");
  if (account_data_len(a) != ROUTE_SIZE || ((Route *)a->data)->tag != ROUTE_TAG) {
    FAIL(E_INVALID_ACCOUNT_DATA, "not a route account");
  }
  TRY(need_writable(a));
  *out = (Route *)a->data;
  return SUCCESS;
}

/* The orchestrator of `source`; program ownership plus the stored source authenticate it, since
 * only this program writes such accounts and only at their verified PDA. */
static u64 load_orchestrator(Ctx *c, const AccountInfo *a, const Pubkey *source, Orchestrator **out) {
  if (!key_eq(a->owner, c->in.program_id) || account_data_len(a) != ORCHESTRATOR_SIZE ||
      ((Orchestrator *)a->data)->tag != ORCHESTRATOR_TAG) {
    FAIL(E_INVALID_ORCHESTRATOR, "orchestrator config missing");
  }
  if (!key_eq(&((Orchestrator *)a->data)->source, source)) {
    FAIL(E_INVALID_ORCHESTRATOR, "orchestrator of another source");
  }
  TRY(need_writable(a));
  *out = (Orchestrator *)a->data;
  return SUCCESS;
}

/* The route's signer seeds: it is the authority of every token account it holds. */
typedef struct {
  SignerSeed seeds[4];
  SignerSeeds signer;
} RouteSigner;

static void route_signer(const Route *r, RouteSigner *s) {
  s->seeds[0] = (SignerSeed){(const u8 *)"route", 5};
  s->seeds[1] = (SignerSeed){r->source.x, 32};
  s->seeds[2] = (SignerSeed){(const u8 *)&r->route_id, 8};
  s->seeds[3] = (SignerSeed){&r->route_bump, 1};
  s->signer = (SignerSeeds){s->seeds, 4};
}

/* ---- CPI ---- */

/* One cross-program call; a struct because BPF functions take at most five arguments. */
typedef struct {
  const Pubkey *program;
  const AccountMeta *metas;
  u64 meta_count;
  const u8 *data;
  u64 data_len;
  const AccountInfo *infos;
  u64 info_count;
  const SignerSeeds *signer; /* NULL when no PDA signs */
} Cpi;

static u64 invoke(const Cpi *cpi) {
  const Instruction ix = {cpi->program, cpi->metas, cpi->meta_count, cpi->data, cpi->data_len};
  u64 result = sol_invoke_signed_c(&ix, cpi->infos, cpi->info_count, cpi->signer, cpi->signer ? 1 : 0);
  if (result != SUCCESS) sol_log("cross-program call failed");
  return result;
}

/* A copy for a CPI with the current data length: the parsed one is stale once an earlier CPI
 * created or resized the account, and the runtime would read the difference as a resize. */
static AccountInfo fresh(const AccountInfo *a) {
  AccountInfo copy = *a;
  copy.data_len = account_data_len(a);
  return copy;
}

static void put_u32(u8 *p, u32 v) { *(u32 *)p = v; }
static void put_u64(u8 *p, u64 v) {
  for (int i = 0; i < 8; i++) p[i] = (u8)(v >> (8 * i));
}

typedef struct {
  const AccountInfo *payer;
  const AccountInfo *target;
  u64 lamports;
  u64 space;
  const Pubkey *owner;
  const SignerSeeds *signer; /* the target's seeds when it is a PDA; NULL when it signed the transaction */
} NewAccount;

/* Creates an account paid by `payer`. An address that already holds lamports (anyone can send
 * some to a known address) is funded, allocated and assigned instead of failing, so such a gift
 * cannot block deployment. */
static u64 create_account(const NewAccount *n) {
  const AccountInfo infos[2] = {fresh(n->payer), fresh(n->target)};
  const AccountMeta both[2] = {{n->payer->key, true, true}, {n->target->key, true, true}};
  const AccountMeta fund[2] = {{n->payer->key, true, true}, {n->target->key, true, false}};
  const AccountMeta one[1] = {{n->target->key, true, true}};
  u8 data[52];
  Cpi cpi = {&SYSTEM_PROGRAM_ID, both, 2, data, 52, infos, 2, n->signer};
  if (*n->target->lamports == 0) {
    put_u32(data, 0); /* CreateAccount */
    put_u64(data + 4, n->lamports);
    put_u64(data + 12, n->space);
    key_copy((Pubkey *)(data + 20), n->owner);
    return invoke(&cpi);
  }
  put_u32(data, 2); /* Transfer */
  put_u64(data + 4, n->lamports);
  cpi.metas = fund;
  cpi.data_len = 12;
  cpi.signer = NULL;
  TRY(invoke(&cpi));
  cpi.metas = one;
  cpi.meta_count = 1;
  cpi.infos = infos + 1;
  cpi.info_count = 1;
  cpi.signer = n->signer;
  put_u32(data, 8); /* Allocate */
  put_u64(data + 4, n->space);
  TRY(invoke(&cpi));
  put_u32(data, 1); /* Assign */
  key_copy((Pubkey *)(data + 4), n->owner);
  cpi.data_len = 36;
  return invoke(&cpi);
}

static u64 token_initialize_account(const AccountInfo *account, const AccountInfo *mint, const Pubkey *owner) {
  const AccountInfo infos[2] = {fresh(account), fresh(mint)};
  const AccountMeta metas[2] = {{account->key, true, false}, {mint->key, false, false}};
  u8 data[33];
  data[0] = 18; /* InitializeAccount3 */
  key_copy((Pubkey *)(data + 1), owner);
  const Cpi cpi = {&TOKEN_PROGRAM_ID, metas, 2, data, 33, infos, 2, NULL};
  return invoke(&cpi);
}

static u64 token_transfer(const AccountInfo *from, const AccountInfo *to, const AccountInfo *authority,
                          u64 amount, const SignerSeeds *signer) {
  const AccountInfo infos[3] = {fresh(from), fresh(to), fresh(authority)};
  const AccountMeta metas[3] = {{from->key, true, false}, {to->key, true, false}, {authority->key, false, true}};
  u8 data[9];
  data[0] = 3; /* Transfer */
  put_u64(data + 1, amount);
  const Cpi cpi = {&TOKEN_PROGRAM_ID, metas, 3, data, 9, infos, 3, signer};
  return invoke(&cpi);
}

/* Inlined: it sits in the loop of Rescue and Reclaim, where a call per account shows in the cost. */
static inline __attribute__((always_inline)) u64 token_close_account(const AccountInfo *account,
                                                                     const AccountInfo *destination,
                                                                     const AccountInfo *authority,
                                                                     const SignerSeeds *signer) {
  const AccountInfo infos[3] = {fresh(account), fresh(destination), fresh(authority)};
  const AccountMeta metas[3] = {
      {account->key, true, false}, {destination->key, true, false}, {authority->key, false, true}};
  const u8 data[1] = {9}; /* CloseAccount */
  const Cpi cpi = {&TOKEN_PROGRAM_ID, metas, 3, data, 1, infos, 3, signer};
  return invoke(&cpi);
}

/* Moves lamports out of an account this program owns; used only after the handler's CPIs. */
static u64 move_lamports(const AccountInfo *from, const AccountInfo *to, u64 amount) {
  if (*from->lamports < amount) FAIL(E_ARITHMETIC_OVERFLOW, "lamports underflow");
  u64 credited;
  if (!add_ok(*to->lamports, amount, &credited)) return E_ARITHMETIC_OVERFLOW;
  *from->lamports -= amount;
  *to->lamports = credited;
  return SUCCESS;
}

/* Closes an account this program owns: every lamport to `to`, data wiped so it can never be read
 * as live state again. */
static u64 close_program_account(const AccountInfo *account, const AccountInfo *to, u64 *closed_lamports) {
  u64 lamports = *account->lamports;
  TRY(move_lamports(account, to, lamports));
  sol_memset_(account->data, 0, account_data_len(account));
  *closed_lamports = lamports;
  return SUCCESS;
}

static u64 load_clock(Ctx *c) { return sol_get_clock_sysvar(&c->clock); }

/* ---- 0: InitConfig [admin (s,w), config (w), program, program data, system program] ---- */

typedef struct {
  u8 tag;
  u8 bump;
  u8 pad[6];
  u64 screening_deposit_lamports;
  Pubkey screening_authority;
  Pubkey platform_wallet;
} InitConfigData;

/* Only the program's upgrade authority may create the config, so nobody can seize it after a
 * deployment: the program account names its ProgramData account, which names the authority. */
static u64 check_upgrade_authority(Ctx *c, const AccountInfo *program, const AccountInfo *program_data,
                                   const Pubkey *admin) {
  TRY(need_key(program, c->in.program_id, E_INVALID_PROGRAM_ACCOUNT));
  if (!key_eq(program->owner, &UPGRADEABLE_LOADER_ID) || account_data_len(program) < 36 ||
      *(const u32 *)program->data != 2 || !key_eq((const Pubkey *)(program->data + 4), program_data->key)) {
    FAIL(E_NOT_UPGRADE_AUTHORITY, "program is not upgradeable");
  }
  if (!key_eq(program_data->owner, &UPGRADEABLE_LOADER_ID) || account_data_len(program_data) < 45 ||
      *(const u32 *)program_data->data != 3 || program_data->data[12] != 1 ||
      !key_eq((const Pubkey *)(program_data->data + 13), admin)) {
    FAIL(E_NOT_UPGRADE_AUTHORITY, "signer is not the upgrade authority");
  }
  return SUCCESS;
}

static u64 init_config(Ctx *c) {
  TRY(need_accounts(c, 5));
  const AccountInfo *admin = &c->in.accounts[0];
  const AccountInfo *config = &c->in.accounts[1];
  if (c->in.data_len != sizeof(InitConfigData)) FAIL(E_INVALID_INSTRUCTION, "bad data");
  const InitConfigData *d = (const InitConfigData *)c->in.data;
  TRY(need_signer(admin));
  TRY(need_writable(admin));
  TRY(need_writable(config));
  TRY(need_key(&c->in.accounts[4], &SYSTEM_PROGRAM_ID, E_INVALID_PROGRAM_ACCOUNT));
  TRY(check_upgrade_authority(c, &c->in.accounts[2], &c->in.accounts[3], admin->key));
  if (key_is_zero(&d->screening_authority) || key_is_zero(&d->platform_wallet)) {
    FAIL(E_INVALID_ROUTE_PARAMETERS, "zero key");
  }
  TRY(need_empty(config));
  const SignerSeed seeds[2] = {{(const u8 *)"config", 6}, {&d->bump, 1}};
  TRY(need_pda(seeds, 2, c->in.program_id, config->key));
  u64 rent;
  TRY(rent_minimum(c, CONFIG_SIZE, &rent));
  const SignerSeeds signer = {seeds, 2};
  const NewAccount n = {admin, config, rent, CONFIG_SIZE, c->in.program_id, &signer};
  TRY(create_account(&n));
  Config *cfg = (Config *)config->data;
  cfg->tag = CONFIG_TAG;
  key_copy(&cfg->admin, admin->key);
  key_copy(&cfg->screening_authority, &d->screening_authority);
  key_copy(&cfg->platform_wallet, &d->platform_wallet);
  cfg->screening_deposit_lamports = d->screening_deposit_lamports;
  cfg->bump = d->bump;
  return SUCCESS;
}

/* ---- 1: UpdateConfig [admin (s), config (w)] ---- */

typedef struct {
  u8 tag;
  u8 pad[7];
  u64 screening_deposit_lamports;
  Pubkey admin;
  Pubkey screening_authority;
  Pubkey platform_wallet;
} UpdateConfigData;

static u64 update_config(Ctx *c) {
  TRY(need_accounts(c, 2));
  const AccountInfo *admin = &c->in.accounts[0];
  const AccountInfo *config = &c->in.accounts[1];
  if (c->in.data_len != sizeof(UpdateConfigData)) FAIL(E_INVALID_INSTRUCTION, "bad data");
  const UpdateConfigData *d = (const UpdateConfigData *)c->in.data;
  Config *cfg;
  TRY(load_config(c, config, &cfg));
  TRY(need_writable(config));
  if (!key_eq(admin->key, &cfg->admin)) FAIL(E_NOT_ADMIN, "not the admin");
  TRY(need_signer(admin));
  if (key_is_zero(&d->admin) || key_is_zero(&d->screening_authority) || key_is_zero(&d->platform_wallet)) {
    FAIL(E_INVALID_ROUTE_PARAMETERS, "zero key");
  }
  key_copy(&cfg->admin, &d->admin);
  key_copy(&cfg->screening_authority, &d->screening_authority);
  key_copy(&cfg->platform_wallet, &d->platform_wallet);
  cfg->screening_deposit_lamports = d->screening_deposit_lamports;
  return SUCCESS;
}

/* ---- 2: InitOrchestrator [source (s,w), orchestrator (w), system program]; idempotent ---- */

static u64 init_orchestrator(Ctx *c) {
  TRY(need_accounts(c, 3));
  const AccountInfo *source = &c->in.accounts[0];
  const AccountInfo *orchestrator = &c->in.accounts[1];
  if (c->in.data_len != 2) FAIL(E_INVALID_INSTRUCTION, "bad data");
  const u8 *bump = c->in.data + 1;
  TRY(need_signer(source));
  TRY(need_writable(source));
  TRY(need_writable(orchestrator));
  TRY(need_key(&c->in.accounts[2], &SYSTEM_PROGRAM_ID, E_INVALID_PROGRAM_ACCOUNT));
  const SignerSeed seeds[3] = {{(const u8 *)"orchestrator", 12}, {source->key->x, 32}, {bump, 1}};
  TRY(need_pda(seeds, 3, c->in.program_id, orchestrator->key));
  if (key_eq(orchestrator->owner, c->in.program_id)) {
    Orchestrator *existing;
    TRY(load_orchestrator(c, orchestrator, source->key, &existing));
    sol_log("orchestrator config exists");
    return SUCCESS;
  }
  TRY(need_empty(orchestrator));
  u64 rent;
  TRY(rent_minimum(c, ORCHESTRATOR_SIZE, &rent));
  const SignerSeeds signer = {seeds, 3};
  const NewAccount n = {source, orchestrator, rent, ORCHESTRATOR_SIZE, c->in.program_id, &signer};
  TRY(create_account(&n));
  Orchestrator *o = (Orchestrator *)orchestrator->data;
  o->tag = ORCHESTRATOR_TAG;
  key_copy(&o->source, source->key);
  o->bump = *bump;
  return SUCCESS;
}

/* ---- intermediate accounts (CreateRoute and AddHops) ---- */

/* Creates intermediate token accounts at fresh addresses whose keys the service generated and
 * which sign this transaction: system account and token initialisation happen in one instruction,
 * so nobody can initialise them with another owner in between. The route owns them. */
static u64 register_hops(Ctx *c, Route *r, const AccountInfo *route, const AccountInfo *payer,
                         const AccountInfo *mint, u64 first_account) {
  u64 count = c->in.account_count - first_account;
  if (r->hops_registered + count > (u64)r->hop_count - 1) FAIL(E_TOO_MANY_HOPS, "too many hop accounts");
  u64 rent;
  TRY(rent_minimum(c, TOKEN_ACCOUNT_SIZE, &rent));
  for (u64 i = 0; i < count; i++) {
    u64 index = first_account + i;
    const AccountInfo *hop = &c->in.accounts[index];
    if (c->in.dup_of[index] != NON_DUP_MARKER) FAIL(E_DUPLICATE_ACCOUNT, "hop account repeated");
    TRY(need_signer(hop));
    TRY(need_writable(hop));
    TRY(need_empty(hop));
    const NewAccount n = {payer, hop, rent, TOKEN_ACCOUNT_SIZE, &TOKEN_PROGRAM_ID, NULL};
    TRY(create_account(&n));
    TRY(token_initialize_account(hop, mint, route->key));
    u8 slot = r->hops_registered;
    key_copy(&r->hops[slot], hop->key);
    r->tokens_live |= (u16)(1u << (slot + 1));
    r->hops_registered = slot + 1;
  }
  return SUCCESS;
}

/* ---- 3: CreateRoute ----
 * [source (s,w), route (w), custody (w), source token (w), mint, config, platform fee token,
 *  integrator fee token, system program, token program, intermediate accounts (s,w)...]
 * The platform's fees settle into the protocol config account (flat fees, forfeited deposits) and
 * into token accounts it owns (the platform fee token account must be one): only this program can
 * move or close them, so no platform key can make a live route's settlement fail. The source
 * names the largest screening deposit it agreed to; a config raised since fails the creation. */

typedef struct {
  u8 tag;
  u8 route_bump;
  u8 custody_bump;
  u8 hop_count;
  u8 screening_required;
  u8 pad0;
  u16 percent_fee_bps;
  u16 integrator_share_bps;
  u16 pad1;
  u32 interval_secs;
  u64 route_id;
  u64 amount;
  u64 flat_fee_per_hop_lamports;
  i64 first_release_at;
  i64 deadline_at;
  Pubkey keeper;
  Pubkey recipient;
  Pubkey recipient_token;
  Pubkey integrator_wallet;
  u64 max_deposit_lamports;
} CreateRouteData;
_Static_assert(sizeof(CreateRouteData) == 192, "create route data");

#define CREATE_ROUTE_FIXED_ACCOUNTS 10

typedef struct {
  u64 net;
  u64 platform_fee;
  u64 integrator_fee;
  u64 platform_flat;
  u64 integrator_flat;
} Fees;

static u64 compute_fees(const CreateRouteData *d, Fees *f) {
  if (d->percent_fee_bps > BPS_DENOMINATOR || d->integrator_share_bps > BPS_DENOMINATOR) {
    FAIL(E_INVALID_FEE_PARAMETERS, "basis points above 10000");
  }
  if (d->amount == 0) FAIL(E_INVALID_AMOUNT, "zero amount");
  u64 fee = mul_bps(d->amount, d->percent_fee_bps, true);
  if (fee >= d->amount) FAIL(E_INVALID_AMOUNT, "nothing left after the fee");
  f->net = d->amount - fee;
  f->integrator_fee = mul_bps(fee, d->integrator_share_bps, false);
  f->platform_fee = fee - f->integrator_fee;
  u64 flat;
  if (!mul_ok(d->flat_fee_per_hop_lamports, d->hop_count, &flat)) return E_ARITHMETIC_OVERFLOW;
  f->integrator_flat = mul_bps(flat, d->integrator_share_bps, false);
  f->platform_flat = flat - f->integrator_flat;
  return SUCCESS;
}

static u64 check_schedule(const CreateRouteData *d) {
  u64 span;
  if (!mul_ok(d->interval_secs, (u64)d->hop_count - 1, &span)) return E_ARITHMETIC_OVERFLOW;
  if (d->first_release_at <= 0 || d->deadline_at <= 0) FAIL(E_INVALID_SCHEDULE, "times must be positive");
  u64 last;
  if (!add_ok((u64)d->first_release_at, span, &last) || last > (u64)d->deadline_at - 1) {
    FAIL(E_INVALID_SCHEDULE, "deadline must follow the last release");
  }
  return SUCCESS;
}

static u64 create_route(Ctx *c) {
  TRY(need_accounts(c, CREATE_ROUTE_FIXED_ACCOUNTS));
  const AccountInfo *source = &c->in.accounts[0];
  const AccountInfo *route = &c->in.accounts[1];
  const AccountInfo *custody = &c->in.accounts[2];
  const AccountInfo *source_token = &c->in.accounts[3];
  const AccountInfo *mint = &c->in.accounts[4];
  const AccountInfo *config = &c->in.accounts[5];
  const AccountInfo *platform_fee_token = &c->in.accounts[6];
  const AccountInfo *integrator_fee_token = &c->in.accounts[7];
  if (c->in.data_len != sizeof(CreateRouteData)) FAIL(E_INVALID_INSTRUCTION, "bad data");
  const CreateRouteData *d = (const CreateRouteData *)c->in.data;

  TRY(need_signer(source));
  TRY(need_writable(source));
  TRY(need_writable(route));
  TRY(need_writable(custody));
  TRY(need_writable(source_token));
  TRY(need_key(&c->in.accounts[8], &SYSTEM_PROGRAM_ID, E_INVALID_PROGRAM_ACCOUNT));
  TRY(need_key(&c->in.accounts[9], &TOKEN_PROGRAM_ID, E_INVALID_PROGRAM_ACCOUNT));
  if (d->hop_count < MIN_HOPS || d->hop_count > MAX_HOPS) FAIL(E_INVALID_HOP_COUNT, "hops outside 3..10");
  /* A native route names no recipient token account (zero): its recipient's wallet gets the SOL. */
  bool native = key_eq(mint->key, &NATIVE_MINT_ID);
  if (key_is_zero(&d->keeper) || key_is_zero(&d->recipient) || key_is_zero(&d->integrator_wallet) ||
      key_is_zero(&d->recipient_token) != native) {
    FAIL(E_INVALID_ROUTE_PARAMETERS, "zero key, or a recipient token account on a native route");
  }
  Fees fees;
  TRY(compute_fees(d, &fees));
  TRY(check_schedule(d));
  TRY(load_clock(c));
  if (d->deadline_at <= c->clock.unix_timestamp) FAIL(E_INVALID_SCHEDULE, "deadline already passed");

  if (!key_eq(mint->owner, &TOKEN_PROGRAM_ID) || account_data_len(mint) != TOKEN_MINT_SIZE ||
      mint->data[TOKEN_MINT_INITIALIZED] != 1) {
    FAIL(E_INVALID_MINT, "not an initialized mint");
  }
  Config *cfg;
  TRY(load_config(c, config, &cfg));
  TRY(need_token_account(source_token, mint->key, source->key, E_INVALID_SOURCE_TOKEN_ACCOUNT));
  TRY(need_token_account(platform_fee_token, mint->key, config->key, E_INVALID_FEE_ACCOUNT));
  TRY(need_token_account(integrator_fee_token, mint->key, NULL, E_INVALID_FEE_ACCOUNT));

  TRY(need_empty(route));
  TRY(need_empty(custody));
  const SignerSeed route_seeds[4] = {
      {(const u8 *)"route", 5}, {source->key->x, 32}, {(const u8 *)&d->route_id, 8}, {&d->route_bump, 1}};
  TRY(need_pda(route_seeds, 4, c->in.program_id, route->key));
  const SignerSeed custody_seeds[3] = {{(const u8 *)"custody", 7}, {route->key->x, 32}, {&d->custody_bump, 1}};
  TRY(need_pda(custody_seeds, 3, c->in.program_id, custody->key));
  if (key_eq(&d->recipient_token, custody->key) || key_eq(&d->recipient, route->key) ||
      (native && key_eq(&d->recipient, custody->key))) {
    FAIL(E_INVALID_ROUTE_PARAMETERS, "recipient is the route itself");
  }

  u64 deposit = d->screening_required ? cfg->screening_deposit_lamports : 0;
  if (deposit > d->max_deposit_lamports) FAIL(E_DEPOSIT_ABOVE_MAXIMUM, "screening deposit above the agreed maximum");
  u64 route_rent, token_rent, route_lamports;
  TRY(rent_minimum(c, ROUTE_SIZE, &route_rent));
  TRY(rent_minimum(c, TOKEN_ACCOUNT_SIZE, &token_rent));
  if (native) {
    /* The delivery must leave even an empty wallet rent exempt, or settlement could never succeed. */
    u64 wallet_rent;
    TRY(rent_minimum(c, 0, &wallet_rent));
    if (fees.net < wallet_rent) FAIL(E_INVALID_AMOUNT, "net amount below a wallet's rent-exempt minimum");
  }
  /* The route account holds the flat fee and the screening deposit until they are earned. */
  if (!add_ok(route_rent, fees.platform_flat, &route_lamports) ||
      !add_ok(route_lamports, fees.integrator_flat, &route_lamports) ||
      !add_ok(route_lamports, deposit, &route_lamports)) {
    return E_ARITHMETIC_OVERFLOW;
  }

  const SignerSeeds route_signer_seeds = {route_seeds, 4};
  const NewAccount new_route = {source, route, route_lamports, ROUTE_SIZE, c->in.program_id, &route_signer_seeds};
  TRY(create_account(&new_route));
  const SignerSeeds custody_signer = {custody_seeds, 3};
  const NewAccount new_custody = {source, custody, token_rent, TOKEN_ACCOUNT_SIZE, &TOKEN_PROGRAM_ID, &custody_signer};
  TRY(create_account(&new_custody));
  TRY(token_initialize_account(custody, mint, route->key));
  TRY(token_transfer(source_token, custody, source, d->amount, NULL));

  Route *r = (Route *)route->data;
  r->tag = ROUTE_TAG;
  r->version = 1;
  r->status = STATUS_DEPLOYING;
  r->hop_count = d->hop_count;
  r->route_bump = d->route_bump;
  r->custody_bump = d->custody_bump;
  r->screening = d->screening_required ? SCREENING_PENDING : SCREENING_NONE;
  r->tokens_live = 1;
  r->route_id = d->route_id;
  key_copy(&r->source, source->key);
  key_copy(&r->mint, mint->key);
  key_copy(&r->recipient, &d->recipient);
  key_copy(&r->recipient_token, &d->recipient_token);
  key_copy(&r->keeper, &d->keeper);
  key_copy(&r->custody, custody->key);
  key_copy(&r->platform_wallet, config->key);
  key_copy(&r->platform_fee_token, platform_fee_token->key);
  key_copy(&r->integrator_wallet, &d->integrator_wallet);
  key_copy(&r->integrator_fee_token, integrator_fee_token->key);
  r->amount = d->amount;
  r->net_amount = fees.net;
  r->platform_fee_tokens = fees.platform_fee;
  r->integrator_fee_tokens = fees.integrator_fee;
  r->platform_flat_lamports = fees.platform_flat;
  r->integrator_flat_lamports = fees.integrator_flat;
  r->deposit_lamports = deposit;
  r->created_at = c->clock.unix_timestamp;
  r->first_release_at = d->first_release_at;
  r->interval_secs = d->interval_secs;
  r->deadline_at = d->deadline_at;
  return register_hops(c, r, route, source, mint, CREATE_ROUTE_FIXED_ACCOUNTS);
}

/* ---- 4: AddHops [source (s,w), route (w), mint, system program, token program, hops (s,w)...] ----
 * data: tag, the hop count the caller saw on chain (so a resent or reordered transaction fails
 * instead of registering hops twice). */

#define ADD_HOPS_FIXED_ACCOUNTS 5

static u64 add_hops(Ctx *c) {
  TRY(need_accounts(c, ADD_HOPS_FIXED_ACCOUNTS + 1));
  const AccountInfo *source = &c->in.accounts[0];
  const AccountInfo *route = &c->in.accounts[1];
  const AccountInfo *mint = &c->in.accounts[2];
  if (c->in.data_len != 2) FAIL(E_INVALID_INSTRUCTION, "bad data");
  Route *r;
  TRY(load_route(c, route, &r));
  TRY(need_key(source, &r->source, E_NOT_SOURCE));
  TRY(need_signer(source));
  TRY(need_writable(source));
  TRY(need_key(mint, &r->mint, E_INVALID_MINT));
  TRY(need_key(&c->in.accounts[3], &SYSTEM_PROGRAM_ID, E_INVALID_PROGRAM_ACCOUNT));
  TRY(need_key(&c->in.accounts[4], &TOKEN_PROGRAM_ID, E_INVALID_PROGRAM_ACCOUNT));
  if (r->status != STATUS_DEPLOYING) FAIL(E_ROUTE_NOT_DEPLOYING, "route is past deployment");
  if (c->in.data[1] != r->hops_registered) FAIL(E_HOP_COUNT_MISMATCH, "existing hop count differs");
  return register_hops(c, r, route, source, mint, ADD_HOPS_FIXED_ACCOUNTS);
}

static bool route_is_native(const Route *r) { return key_eq(&r->mint, &NATIVE_MINT_ID); }

/* The account that holds the route's net amount before step i: custody, the intermediate accounts,
 * and for i == hop_count the recipient's token account (its wallet on a native route). */
static inline __attribute__((always_inline)) const Pubkey *holder(const Route *r, u64 i) {
  if (i == 0) return &r->custody;
  if (i == r->hop_count) return route_is_native(r) ? &r->recipient : &r->recipient_token;
  return &r->hops[i - 1];
}

/* ---- 5: InitSteps [source (s,w), route (w), orchestrator (w), recipient holder (the recipient's
 * token account; its wallet on a native route), system program, step accounts (w)...]; data: tag,
 * then (index, bump) per step account. Steps that already exist are skipped, so the same
 * transaction can be sent again. ---- */

#define INIT_STEPS_FIXED_ACCOUNTS 5

static u64 init_steps(Ctx *c) {
  TRY(need_accounts(c, INIT_STEPS_FIXED_ACCOUNTS + 1));
  const AccountInfo *source = &c->in.accounts[0];
  const AccountInfo *route = &c->in.accounts[1];
  const AccountInfo *orchestrator = &c->in.accounts[2];
  const AccountInfo *recipient_holder = &c->in.accounts[3];
  u64 count = c->in.account_count - INIT_STEPS_FIXED_ACCOUNTS;
  if (c->in.data_len != 1 + 2 * count) FAIL(E_INVALID_INSTRUCTION, "bad data");
  Route *r;
  TRY(load_route(c, route, &r));
  TRY(need_key(source, &r->source, E_NOT_SOURCE));
  TRY(need_signer(source));
  TRY(need_writable(source));
  TRY(need_key(&c->in.accounts[4], &SYSTEM_PROGRAM_ID, E_INVALID_PROGRAM_ACCOUNT));
  if (r->hops_registered != r->hop_count - 1) FAIL(E_DEPLOYMENT_INCOMPLETE, "intermediate accounts missing");
  Orchestrator *o;
  TRY(load_orchestrator(c, orchestrator, &r->source, &o));
  bool native = route_is_native(r);
  TRY(need_key(recipient_holder, native ? &r->recipient : &r->recipient_token, E_INVALID_RECIPIENT_ACCOUNT));

  u64 rent;
  TRY(rent_minimum(c, STEP_SIZE, &rent));
  for (u64 i = 0; i < count; i++) {
    const AccountInfo *step = &c->in.accounts[INIT_STEPS_FIXED_ACCOUNTS + i];
    const u8 *index = c->in.data + 1 + 2 * i;
    const u8 *bump = index + 1;
    if (*index >= r->hop_count) FAIL(E_INVALID_STEP_INDEX, "step index outside the route");
    if (r->steps_live & (1u << *index)) {
      const Step *s = (const Step *)step->data;
      if (!key_eq(step->owner, c->in.program_id) || account_data_len(step) != STEP_SIZE || s->tag != STEP_TAG ||
          !key_eq(&s->route, route->key) || s->index != *index) {
        FAIL(E_INVALID_STEP_ACCOUNT, "step account does not match");
      }
      continue;
    }
    /* A re-sent session transaction is a no-op; creating steps is for deployment only. */
    if (r->status != STATUS_DEPLOYING) FAIL(E_ROUTE_NOT_DEPLOYING, "route is past deployment");
    TRY(need_writable(step));
    TRY(need_empty(step));
    const SignerSeed seeds[4] = {{(const u8 *)"step", 4}, {route->key->x, 32}, {index, 1}, {bump, 1}};
    TRY(need_pda(seeds, 4, c->in.program_id, step->key));
    if (*index == r->hop_count - 1 && !native) {
      /* The destination must exist and belong to the recipient before anything can execute (a
       * wallet needs nothing: any address can receive lamports). */
      TRY(need_token_account(recipient_holder, &r->mint, &r->recipient, E_INVALID_RECIPIENT_ACCOUNT));
    }
    const SignerSeeds signer = {seeds, 4};
    const NewAccount n = {source, step, rent, STEP_SIZE, c->in.program_id, &signer};
    TRY(create_account(&n));
    Step *s = (Step *)step->data;
    s->tag = STEP_TAG;
    key_copy(&s->route, route->key);
    s->index = *index;
    s->bump = *bump;
    r->steps_live |= (u16)(1u << *index);
  }
  if (r->status != STATUS_DEPLOYING) return SUCCESS;
  if (!r->in_orchestrator) {
    if (o->open_routes == 0xffffffffu) return E_ARITHMETIC_OVERFLOW;
    o->open_routes += 1;
    o->routes_total += 1;
    r->in_orchestrator = 1;
  }
  if (r->steps_live == (u16)((1u << r->hop_count) - 1)) {
    r->status = STATUS_ACTIVE;
    sol_log("route active");
  }
  return SUCCESS;
}

/* ---- 6: ScreenRoute [screening authority (s), config, route (w), source (w), platform wallet (w)] ---- */

static u64 screen_route(Ctx *c) {
  TRY(need_accounts(c, 5));
  const AccountInfo *authority = &c->in.accounts[0];
  const AccountInfo *source = &c->in.accounts[3];
  const AccountInfo *platform_wallet = &c->in.accounts[4];
  if (c->in.data_len != 2) FAIL(E_INVALID_INSTRUCTION, "bad data");
  u8 verdict = c->in.data[1];
  Config *cfg;
  TRY(load_config(c, &c->in.accounts[1], &cfg));
  if (!key_eq(authority->key, &cfg->screening_authority)) FAIL(E_NOT_SCREENING_AUTHORITY, "not the screener");
  TRY(need_signer(authority));
  Route *r;
  const AccountInfo *route = &c->in.accounts[2];
  TRY(load_route(c, route, &r));
  if (verdict != VERDICT_VERIFIED && verdict != VERDICT_FLAGGED) FAIL(E_INVALID_VERDICT, "unknown verdict");
  if (r->screening != SCREENING_PENDING) FAIL(E_SCREENING_NOT_PENDING, "no pending screening");
  if (r->status != STATUS_DEPLOYING && r->status != STATUS_ACTIVE) FAIL(E_ROUTE_NOT_ACTIVE, "route closed");
  TRY(need_key(source, &r->source, E_NOT_SOURCE));
  TRY(need_writable(source));
  TRY(need_key(platform_wallet, &r->platform_wallet, E_INVALID_FEE_ACCOUNT));
  TRY(need_writable(platform_wallet));
  u64 deposit = r->deposit_lamports;
  if (verdict == VERDICT_VERIFIED) {
    TRY(move_lamports(route, source, deposit));
    r->screening = SCREENING_VERIFIED;
  } else {
    TRY(move_lamports(route, platform_wallet, deposit));
    r->screening = SCREENING_FLAGGED;
    r->status = STATUS_FLAGGED;
  }
  r->deposit_lamports = 0;
  u64 out[2] = {verdict, deposit};
  sol_set_return_data((const u8 *)out, sizeof(out));
  return SUCCESS;
}

/* ---- 7: ExecuteStep [keeper (s), route (w), step (w), from token (w), to (w), token program;
 * final step also: custody (w), platform fee token (w), integrator fee token (w), platform wallet
 * (w), integrator wallet (w)]; data: tag, step index. `to` is the next holder: on the last step of
 * a native route, the recipient's wallet. ---- */

/* The last step of a native route unwraps: the last intermediate account (wrapped SOL, owned by
 * the route) is closed into the route account, which settle() then debits by exactly the net
 * amount for the recipient's wallet, keeping the closed account's rent (and anything sent to it)
 * for Reclaim. Closing is the only way SPL Token unwraps. The account must be the route's and hold
 * the net amount its close releases. */
static u64 unwrap_into_route(Route *r, const AccountInfo *route, const AccountInfo *from,
                             const SignerSeeds *signer) {
  TRY(need_token_account(from, &r->mint, route->key, E_WRONG_SOURCE_ACCOUNT));
  if (load_u64(from->data + TOKEN_ACCOUNT_AMOUNT) < r->net_amount) {
    FAIL(E_WRONG_SOURCE_ACCOUNT, "last intermediate account holds less than the net amount");
  }
  TRY(token_close_account(from, route, route, signer));
  r->tokens_live &= (u16) ~(1u << (r->hop_count - 1)); /* bit of intermediate account hop_count - 2 */
  return SUCCESS;
}

/* The last step: checks the settlement accounts, delivers the net amount (native lamports on a
 * native route) and pays both fees, so the route settles atomically or not at all. The fees are
 * earned only now: a route that never arrives costs nothing. Direct lamport moves come after every
 * CPI. */
static u64 settle(Ctx *c, Route *r, const SignerSeeds *signer) {
  const AccountInfo *route = &c->in.accounts[1];
  const AccountInfo *from = &c->in.accounts[3];
  const AccountInfo *to = &c->in.accounts[4];
  const AccountInfo *custody = &c->in.accounts[6];
  TRY(need_accounts(c, 11));
  bool unwrap = route_is_native(r);
  if (!unwrap) TRY(need_token_account(to, &r->mint, &r->recipient, E_WRONG_DESTINATION));
  TRY(need_key(custody, &r->custody, E_INVALID_FEE_ACCOUNT));
  TRY(need_key(&c->in.accounts[7], &r->platform_fee_token, E_INVALID_FEE_ACCOUNT));
  TRY(need_key(&c->in.accounts[8], &r->integrator_fee_token, E_INVALID_FEE_ACCOUNT));
  TRY(need_key(&c->in.accounts[9], &r->platform_wallet, E_INVALID_FEE_ACCOUNT));
  TRY(need_key(&c->in.accounts[10], &r->integrator_wallet, E_INVALID_FEE_ACCOUNT));
  for (u64 i = 6; i <= 10; i++) TRY(need_writable(&c->in.accounts[i]));

  if (unwrap) {
    TRY(unwrap_into_route(r, route, from, signer));
  } else {
    TRY(token_transfer(from, to, route, r->net_amount, signer));
  }
  if (r->platform_fee_tokens > 0) {
    TRY(token_transfer(custody, &c->in.accounts[7], route, r->platform_fee_tokens, signer));
  }
  if (r->integrator_fee_tokens > 0) {
    TRY(token_transfer(custody, &c->in.accounts[8], route, r->integrator_fee_tokens, signer));
  }
  if (unwrap) TRY(move_lamports(route, to, r->net_amount));
  TRY(move_lamports(route, &c->in.accounts[9], r->platform_flat_lamports));
  TRY(move_lamports(route, &c->in.accounts[10], r->integrator_flat_lamports));
  r->status = STATUS_SETTLED;
  r->closed_at = c->clock.unix_timestamp;
  return SUCCESS;
}

static u64 execute_step(Ctx *c) {
  TRY(need_accounts(c, 6));
  const AccountInfo *keeper = &c->in.accounts[0];
  const AccountInfo *route = &c->in.accounts[1];
  const AccountInfo *step = &c->in.accounts[2];
  const AccountInfo *from = &c->in.accounts[3];
  const AccountInfo *to = &c->in.accounts[4];
  if (c->in.data_len != 2) FAIL(E_INVALID_INSTRUCTION, "bad data");
  u64 index = c->in.data[1];
  Route *r;
  TRY(load_route(c, route, &r));
  if (!key_eq(keeper->key, &r->keeper)) FAIL(E_NOT_KEEPER, "not the route's keeper");
  TRY(need_signer(keeper));
  if (index >= r->hop_count) FAIL(E_INVALID_STEP_INDEX, "step index outside the route");
  if (index < r->next_step) FAIL(E_STEP_ALREADY_EXECUTED, "step already executed");
  if (index > r->next_step) FAIL(E_STEP_OUT_OF_ORDER, "an earlier step is pending");
  if (r->status == STATUS_FLAGGED || r->screening == SCREENING_FLAGGED) FAIL(E_ROUTE_FLAGGED, "route flagged");
  if (r->status != STATUS_ACTIVE) FAIL(E_ROUTE_NOT_ACTIVE, "route not active");
  if (r->screening == SCREENING_PENDING) FAIL(E_SCREENING_PENDING, "screening pending");
  TRY(load_clock(c));
  i64 now = c->clock.unix_timestamp;
  if (now > r->deadline_at) FAIL(E_DEADLINE_PASSED, "deadline passed");
  if (now < r->first_release_at + (i64)index * r->interval_secs) FAIL(E_STEP_NOT_DUE, "step not due");

  Step *s = (Step *)step->data;
  if (!key_eq(step->owner, c->in.program_id) || account_data_len(step) != STEP_SIZE || s->tag != STEP_TAG ||
      !key_eq(&s->route, route->key) || s->index != index) {
    FAIL(E_INVALID_STEP_ACCOUNT, "step account does not match");
  }
  TRY(need_writable(step));
  if (s->status != STEP_PENDING) FAIL(E_STEP_ALREADY_EXECUTED, "step already executed");
  TRY(need_key(from, holder(r, index), E_WRONG_SOURCE_ACCOUNT));
  TRY(need_key(to, holder(r, index + 1), E_WRONG_DESTINATION));
  TRY(need_writable(from));
  TRY(need_writable(to));
  TRY(need_key(&c->in.accounts[5], &TOKEN_PROGRAM_ID, E_INVALID_PROGRAM_ACCOUNT));
  bool last = index + 1 == r->hop_count;
  RouteSigner signer;
  route_signer(r, &signer);
  if (last) {
    TRY(settle(c, r, &signer.signer));
  } else {
    TRY(token_transfer(from, to, route, r->net_amount, &signer.signer));
  }
  s->status = STEP_EXECUTED;
  s->executed_at = now;
  s->amount = r->net_amount;
  s->slot = c->clock.slot;
  r->next_step = (u8)(index + 1);
  u64 out[3] = {index, r->net_amount, last};
  sol_set_return_data((const u8 *)out, sizeof(out));
  return SUCCESS;
}

/* ---- 8: MarkFailed [keeper (s), route (w)]: the keeper gives up; the source may rescue at once ---- */

static u64 mark_failed(Ctx *c) {
  TRY(need_accounts(c, 2));
  const AccountInfo *keeper = &c->in.accounts[0];
  if (c->in.data_len != 1) FAIL(E_INVALID_INSTRUCTION, "bad data");
  Route *r;
  TRY(load_route(c, &c->in.accounts[1], &r));
  if (!key_eq(keeper->key, &r->keeper)) FAIL(E_NOT_KEEPER, "not the route's keeper");
  TRY(need_signer(keeper));
  if (r->status != STATUS_DEPLOYING && r->status != STATUS_ACTIVE) FAIL(E_ROUTE_NOT_ACTIVE, "route closed");
  TRY(load_clock(c));
  r->status = STATUS_FAILED;
  r->closed_at = c->clock.unix_timestamp;
  return SUCCESS;
}

/* ---- 9: Rescue, 10: Reclaim ----
 * [source (s,w), route (w), orchestrator (w), source token (w), token program, accounts to close (w)...]
 * data: tag, flags (bit 0: also close the orchestrator config when no route of the source is open).
 * Accounts to close are the route's step states and token accounts (custody, intermediates), in
 * any order and any subset, so a large route can be recovered over several transactions. Tokens
 * still in a closed token account go to the source's token account. The route itself closes once
 * none of its accounts is left. Return data: Recovery. */

typedef struct {
  u64 tokens;              /* tokens moved to the source's token account */
  u64 refund_lamports;     /* flat fee and screening deposit returned by a rescue */
  u64 route_lamports;      /* the route account's lamports when it closed */
  u64 step_lamports;       /* lamports of the step states closed */
  u64 token_lamports;      /* lamports of the token accounts closed */
  u64 orchestrator_lamports;
  u8 route_closed;
  u8 orchestrator_closed;
  u8 steps_left;
  u8 token_accounts_left;
  u8 pad[4];
} Recovery;

#define RECOVER_FIXED_ACCOUNTS 5

static u64 popcount16(u16 v) {
  u64 n = 0;
  for (; v != 0; v &= (u16)(v - 1)) n++;
  return n;
}

/* Which live token account of the route `key` is: bit index in tokens_live, or -1. */
static int token_slot(const Route *r, const Pubkey *key) {
  if ((r->tokens_live & 1) && key_eq(key, &r->custody)) return 0;
  for (u64 i = 0; i < r->hops_registered; i++) {
    if ((r->tokens_live & (1u << (i + 1))) && key_eq(key, &r->hops[i])) return (int)(i + 1);
  }
  return -1;
}

/* Bit i set: account i is a token account. Taken before any CPI, since closing a token account
 * hands it back to the System Program. */
static u64 token_account_mask(Ctx *c) {
  u64 mask = 0;
  for (u64 i = RECOVER_FIXED_ACCOUNTS; i < c->in.account_count; i++) {
    if (key_eq(c->in.accounts[i].owner, &TOKEN_PROGRAM_ID)) mask |= 1ULL << i;
  }
  return mask;
}

static u64 close_token_accounts(Ctx *c, Route *r, const AccountInfo *route, u64 token_mask, Recovery *rec) {
  const AccountInfo *source = &c->in.accounts[0];
  const AccountInfo *source_token = &c->in.accounts[3];
  bool source_token_checked = false;
  RouteSigner signer;
  route_signer(r, &signer);
  for (u64 i = RECOVER_FIXED_ACCOUNTS; i < c->in.account_count; i++) {
    const AccountInfo *a = &c->in.accounts[i];
    if (!(token_mask & (1ULL << i))) continue;
    if (c->in.dup_of[i] != NON_DUP_MARKER) FAIL(E_DUPLICATE_ACCOUNT, "account repeated");
    int slot = token_slot(r, a->key);
    if (slot < 0) {
      sol_log_pubkey(a->key);
      FAIL(E_UNKNOWN_ROUTE_ACCOUNT, "not a live token account of this route");
    }
    TRY(need_writable(a));
    u64 amount = load_u64(a->data + TOKEN_ACCOUNT_AMOUNT);
    if (amount > 0) {
      if (!source_token_checked) {
        TRY(need_writable(source_token));
        TRY(need_token_account(source_token, &r->mint, &r->source, E_INVALID_SOURCE_TOKEN_ACCOUNT));
        source_token_checked = true;
      }
      TRY(token_transfer(a, source_token, route, amount, &signer.signer));
      if (!add_ok(rec->tokens, amount, &rec->tokens)) return E_ARITHMETIC_OVERFLOW;
    }
    u64 lamports = *a->lamports;
    TRY(token_close_account(a, source, route, &signer.signer));
    if (!add_ok(rec->token_lamports, lamports, &rec->token_lamports)) return E_ARITHMETIC_OVERFLOW;
    r->tokens_live &= (u16)~(1u << slot);
  }
  return SUCCESS;
}

static u64 close_steps(Ctx *c, Route *r, const AccountInfo *route, u64 token_mask, Recovery *rec) {
  const AccountInfo *source = &c->in.accounts[0];
  for (u64 i = RECOVER_FIXED_ACCOUNTS; i < c->in.account_count; i++) {
    const AccountInfo *a = &c->in.accounts[i];
    if (token_mask & (1ULL << i)) continue;
    if (c->in.dup_of[i] != NON_DUP_MARKER) FAIL(E_DUPLICATE_ACCOUNT, "account repeated");
    const Step *s = (const Step *)a->data;
    if (!key_eq(a->owner, c->in.program_id) || account_data_len(a) != STEP_SIZE || s->tag != STEP_TAG ||
        !key_eq(&s->route, route->key) || s->index >= r->hop_count || !(r->steps_live & (1u << s->index))) {
      sol_log_pubkey(a->key);
      FAIL(E_UNKNOWN_ROUTE_ACCOUNT, "not a live step of this route");
    }
    TRY(need_writable(a));
    u8 index = s->index;
    u64 lamports;
    TRY(close_program_account(a, source, &lamports));
    if (!add_ok(rec->step_lamports, lamports, &rec->step_lamports)) return E_ARITHMETIC_OVERFLOW;
    r->steps_live &= (u16)~(1u << index);
  }
  return SUCCESS;
}

static u64 recover(Ctx *c, bool rescue) {
  TRY(need_accounts(c, RECOVER_FIXED_ACCOUNTS));
  const AccountInfo *source = &c->in.accounts[0];
  const AccountInfo *route = &c->in.accounts[1];
  const AccountInfo *orchestrator = &c->in.accounts[2];
  if (c->in.data_len != 2) FAIL(E_INVALID_INSTRUCTION, "bad data");
  u8 flags = c->in.data[1];
  Route *r;
  TRY(load_route(c, route, &r));
  TRY(need_key(source, &r->source, E_NOT_SOURCE));
  TRY(need_signer(source));
  TRY(need_writable(source));
  TRY(need_key(&c->in.accounts[4], &TOKEN_PROGRAM_ID, E_INVALID_PROGRAM_ACCOUNT));
  TRY(load_clock(c));
  u8 status = r->status;
  if (rescue) {
    if (status == STATUS_SETTLED) FAIL(E_ROUTE_SETTLED, "route settled; reclaim rent instead");
    if (status == STATUS_ACTIVE && c->clock.unix_timestamp <= r->deadline_at) {
      FAIL(E_ROUTE_NOT_RESCUABLE, "route active until its deadline");
    }
  } else if (status != STATUS_SETTLED && status != STATUS_RESCUED) {
    FAIL(E_ROUTE_NOT_RECLAIMABLE, "route not settled");
  }

  Recovery rec = {0};
  u64 token_mask = token_account_mask(c);
  TRY(close_token_accounts(c, r, route, token_mask, &rec));
  TRY(close_steps(c, r, route, token_mask, &rec));
  if (rescue && status != STATUS_RESCUED) {
    /* Nothing was earned: the flat fee and any screening deposit still held go back. */
    u64 refund;
    if (!add_ok(r->platform_flat_lamports, r->integrator_flat_lamports, &refund) ||
        !add_ok(refund, r->deposit_lamports, &refund)) {
      return E_ARITHMETIC_OVERFLOW;
    }
    TRY(move_lamports(route, source, refund));
    r->platform_flat_lamports = 0;
    r->integrator_flat_lamports = 0;
    r->deposit_lamports = 0;
    r->status = STATUS_RESCUED;
    r->closed_at = c->clock.unix_timestamp;
    rec.refund_lamports = refund;
  }
  rec.steps_left = (u8)popcount16(r->steps_live);
  rec.token_accounts_left = (u8)popcount16(r->tokens_live);

  Orchestrator *o = NULL;
  if (r->steps_live == 0 && r->tokens_live == 0) {
    if (r->in_orchestrator) {
      TRY(load_orchestrator(c, orchestrator, &r->source, &o));
      if (o->open_routes == 0) return E_ARITHMETIC_OVERFLOW;
      o->open_routes -= 1;
    }
    TRY(close_program_account(route, source, &rec.route_lamports));
    rec.route_closed = 1;
  }
  if (flags & RECOVER_CLOSE_ORCHESTRATOR) {
    if (o == NULL) TRY(load_orchestrator(c, orchestrator, source->key, &o));
    if (o->open_routes == 0) {
      TRY(close_program_account(orchestrator, source, &rec.orchestrator_lamports));
      rec.orchestrator_closed = 1;
    } else {
      sol_log("orchestrator config kept: routes still open");
    }
  }
  sol_log_64_(rec.tokens, rec.refund_lamports, rec.route_lamports, rec.step_lamports, rec.token_lamports);
  sol_set_return_data((const u8 *)&rec, sizeof(rec));
  return SUCCESS;
}

/* ---- 11: CloseOrchestrator [source (s,w), orchestrator (w)] ---- */

static u64 close_orchestrator(Ctx *c) {
  TRY(need_accounts(c, 2));
  const AccountInfo *source = &c->in.accounts[0];
  const AccountInfo *orchestrator = &c->in.accounts[1];
  if (c->in.data_len != 1) FAIL(E_INVALID_INSTRUCTION, "bad data");
  TRY(need_signer(source));
  TRY(need_writable(source));
  Orchestrator *o;
  TRY(load_orchestrator(c, orchestrator, source->key, &o));
  if (o->open_routes != 0) FAIL(E_ORCHESTRATOR_HAS_OPEN_ROUTES, "routes still open");
  u64 lamports;
  TRY(close_program_account(orchestrator, source, &lamports));
  sol_set_return_data((const u8 *)&lamports, sizeof(lamports));
  return SUCCESS;
}

/* ---- 12: WithdrawLamports [platform wallet (s), config (w), destination (w)] ----
 * ---- 13: WithdrawTokens [platform wallet (s), config, vault (w), destination (w), token program] ----
 * data: tag, pad, amount u64. The platform's earnings leave the config account (lamports above its
 * rent-exempt minimum) or a token account it owns, signed by the config's platform wallet. */

typedef struct {
  u8 tag;
  u8 pad[7];
  u64 amount;
} WithdrawData;

/* The config, with the platform wallet as a signer: who may move the platform's earnings. */
static u64 load_withdrawal(Ctx *c, u64 accounts, Config **cfg, u64 *amount) {
  TRY(need_accounts(c, accounts));
  if (c->in.data_len != sizeof(WithdrawData)) FAIL(E_INVALID_INSTRUCTION, "bad data");
  TRY(load_config(c, &c->in.accounts[1], cfg));
  if (!key_eq(c->in.accounts[0].key, &(*cfg)->platform_wallet)) {
    FAIL(E_NOT_PLATFORM_WALLET, "not the platform wallet");
  }
  TRY(need_signer(&c->in.accounts[0]));
  *amount = ((const WithdrawData *)c->in.data)->amount;
  return SUCCESS;
}

static u64 withdraw_lamports(Ctx *c) {
  Config *cfg;
  u64 amount;
  TRY(load_withdrawal(c, 3, &cfg, &amount));
  const AccountInfo *config = &c->in.accounts[1];
  const AccountInfo *destination = &c->in.accounts[2];
  TRY(need_writable(config));
  TRY(need_writable(destination));
  /* Debiting and crediting one account would mint lamports out of nothing in this arithmetic. */
  if (key_eq(destination->key, config->key)) FAIL(E_DUPLICATE_ACCOUNT, "destination is the config");
  u64 rent;
  TRY(rent_minimum(c, CONFIG_SIZE, &rent));
  if (*config->lamports < rent || *config->lamports - rent < amount) {
    FAIL(E_WITHDRAWAL_TOO_LARGE, "withdrawal above the config's earnings");
  }
  return move_lamports(config, destination, amount);
}

static u64 withdraw_tokens(Ctx *c) {
  Config *cfg;
  u64 amount;
  TRY(load_withdrawal(c, 5, &cfg, &amount));
  const AccountInfo *config = &c->in.accounts[1];
  const AccountInfo *vault = &c->in.accounts[2];
  const AccountInfo *destination = &c->in.accounts[3];
  TRY(need_key(&c->in.accounts[4], &TOKEN_PROGRAM_ID, E_INVALID_PROGRAM_ACCOUNT));
  if (!key_eq(vault->owner, &TOKEN_PROGRAM_ID) || account_data_len(vault) != TOKEN_ACCOUNT_SIZE ||
      vault->data[TOKEN_ACCOUNT_STATE] == 0 ||
      !key_eq((const Pubkey *)(vault->data + TOKEN_ACCOUNT_OWNER), config->key)) {
    FAIL(E_INVALID_FEE_ACCOUNT, "not a token account of the config");
  }
  TRY(need_writable(vault));
  TRY(need_writable(destination));
  const SignerSeed seeds[2] = {{(const u8 *)"config", 6}, {&cfg->bump, 1}};
  const SignerSeeds signer = {seeds, 2};
  return token_transfer(vault, destination, config, amount, &signer);
}

u64 entrypoint(u8 *input) {
  Ctx *c = (Ctx *)HEAP_START;
  if (!deserialize(input, &c->in)) FAIL(E_TOO_MANY_ACCOUNTS, "too many accounts");
  if (c->in.data_len == 0) FAIL(E_INVALID_INSTRUCTION, "empty instruction data");
  switch (c->in.data[0]) {
    case IX_INIT_CONFIG:
      return init_config(c);
    case IX_UPDATE_CONFIG:
      return update_config(c);
    case IX_INIT_ORCHESTRATOR:
      return init_orchestrator(c);
    case IX_CREATE_ROUTE:
      return create_route(c);
    case IX_ADD_HOPS:
      return add_hops(c);
    case IX_INIT_STEPS:
      return init_steps(c);
    case IX_SCREEN_ROUTE:
      return screen_route(c);
    case IX_EXECUTE_STEP:
      return execute_step(c);
    case IX_MARK_FAILED:
      return mark_failed(c);
    case IX_RESCUE:
      return recover(c, true);
    case IX_RECLAIM:
      return recover(c, false);
    case IX_CLOSE_ORCHESTRATOR:
      return close_orchestrator(c);
    case IX_WITHDRAW_LAMPORTS:
      return withdraw_lamports(c);
    case IX_WITHDRAW_TOKENS:
      return withdraw_tokens(c);
    default:
      FAIL(E_INVALID_INSTRUCTION, "unknown instruction");
  }
}
