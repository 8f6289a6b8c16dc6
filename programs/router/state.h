/*
 * Account layouts of the router program. Little-endian, naturally aligned, fixed size; the
 * TypeScript decoders in src/chain/router/accounts.ts mirror them field by field.
 */
#ifndef ROUTER_STATE_H
#define ROUTER_STATE_H
#include "sol.h"

#define MIN_HOPS 3
#define MAX_HOPS 10
#define BPS_DENOMINATOR 10000

/* Type tags: the first eight bytes of each account, ASCII. */
#define CONFIG_TAG 0x4749464e4f435254ULL       /* "TRCONFIG" */
#define ORCHESTRATOR_TAG 0x4843524f00005254ULL /* "TR\0\0ORCH" */
#define ROUTE_TAG 0x4554554f52005254ULL        /* "TR\0ROUTE" */
#define STEP_TAG 0x5045545300005254ULL         /* "TR\0\0STEP" */

/* Protocol config, PDA ["config"]. */
typedef struct {
  u64 tag;
  Pubkey admin;
  Pubkey screening_authority;
  Pubkey platform_wallet; /* receives flat fees and forfeited deposits; owns platform fee token accounts */
  u64 screening_deposit_lamports;
  u8 bump;
  u8 pad[7];
} Config;
#define CONFIG_SIZE 120

/* Per source wallet, PDA ["orchestrator", source]: counts the source's open routes. */
typedef struct {
  u64 tag;
  Pubkey source;
  u32 open_routes;
  u8 bump;
  u8 pad[3];
  u64 routes_total;
} Orchestrator;
#define ORCHESTRATOR_SIZE 56

#define STATUS_DEPLOYING 0
#define STATUS_ACTIVE 1
#define STATUS_SETTLED 2
#define STATUS_FAILED 3
#define STATUS_FLAGGED 4
#define STATUS_RESCUED 5

#define SCREENING_NONE 0
#define SCREENING_PENDING 1
#define SCREENING_VERIFIED 2
#define SCREENING_FLAGGED 3

/* A route, PDA ["route", source, route_id (u64 LE)]: fixed terms plus progress. It is the token
 * authority of the custody account and of every intermediate account. */
typedef struct {
  u64 tag;
  u8 version;
  u8 status;
  u8 hop_count;       /* steps, 3..10; hop_count - 1 intermediate token accounts */
  u8 hops_registered; /* intermediate token accounts created so far */
  u8 next_step;
  u8 route_bump;
  u8 custody_bump;
  u8 screening;
  u16 steps_live;  /* bit i: step state i exists */
  u16 tokens_live; /* bit 0: custody, bit i + 1: intermediate account i exists */
  u8 in_orchestrator;
  u8 pad[3];
  u64 route_id;
  Pubkey source;
  Pubkey mint;
  Pubkey recipient;
  Pubkey recipient_token;
  Pubkey keeper;
  Pubkey custody;
  Pubkey platform_wallet;
  Pubkey platform_fee_token;
  Pubkey integrator_wallet;
  Pubkey integrator_fee_token;
  u64 amount;                   /* tokens taken into custody */
  u64 net_amount;               /* tokens each step moves and the recipient receives */
  u64 platform_fee_tokens;      /* percentage fee shares, paid from custody at settlement */
  u64 integrator_fee_tokens;
  u64 platform_flat_lamports;   /* flat fee shares, held by this account until settlement */
  u64 integrator_flat_lamports;
  u64 deposit_lamports;         /* screening deposit still held */
  i64 created_at;
  i64 first_release_at; /* step i is due at first_release_at + i * interval_secs */
  i64 interval_secs;
  i64 deadline_at;      /* after this the route cannot execute and the source may rescue */
  i64 closed_at;        /* when it settled or was rescued */
  Pubkey hops[MAX_HOPS - 1];
} Route;
#define ROUTE_SIZE 736

#define STEP_PENDING 0
#define STEP_EXECUTED 1

/* Step state, PDA ["step", route, index (u8)]. */
typedef struct {
  u64 tag;
  Pubkey route;
  u8 index;
  u8 bump;
  u8 status;
  u8 pad[5];
  i64 executed_at;
  u64 amount;
  u64 slot;
} Step;
#define STEP_SIZE 72

/* SPL Token account layout (the fields this program reads). */
#define TOKEN_ACCOUNT_SIZE 165
#define TOKEN_MINT_SIZE 82
#define TOKEN_ACCOUNT_MINT 0
#define TOKEN_ACCOUNT_OWNER 32
#define TOKEN_ACCOUNT_AMOUNT 64
#define TOKEN_ACCOUNT_STATE 108
#define TOKEN_MINT_INITIALIZED 45

_Static_assert(sizeof(Config) == CONFIG_SIZE, "config size");
_Static_assert(sizeof(Orchestrator) == ORCHESTRATOR_SIZE, "orchestrator size");
_Static_assert(sizeof(Route) == ROUTE_SIZE, "route size");
_Static_assert(sizeof(Step) == STEP_SIZE, "step size");

#endif
