/*
 * Custom error codes of the router program (Custom(n) in transaction errors). Each failure has its
 * own code; src/chain/router/errors.ts names them and a test keeps both lists identical.
 * Numbering starts at 6000 so they never collide with SPL Token or System errors raised in CPIs.
 */
#ifndef ROUTER_ERRORS_H
#define ROUTER_ERRORS_H

#define E_INVALID_INSTRUCTION 6000          /* unknown instruction or malformed instruction data */
#define E_NOT_ENOUGH_ACCOUNTS 6001          /* fewer accounts than the instruction needs */
#define E_TOO_MANY_ACCOUNTS 6002            /* more accounts than the instruction accepts */
#define E_MISSING_SIGNATURE 6003            /* a required signer did not sign */
#define E_ACCOUNT_NOT_WRITABLE 6004         /* an account the instruction changes is read-only */
#define E_INVALID_ACCOUNT_OWNER 6005        /* an account is owned by the wrong program */
#define E_INVALID_PDA 6006                  /* an address does not match its seeds */
#define E_INVALID_ACCOUNT_DATA 6007         /* an account has the wrong size or type tag */
#define E_ACCOUNT_ALREADY_INITIALIZED 6008  /* an account to create already exists */
#define E_DUPLICATE_ACCOUNT 6009            /* the same account was passed twice where that is unsafe */
#define E_ARITHMETIC_OVERFLOW 6010          /* checked arithmetic overflowed */
#define E_INVALID_PROGRAM_ACCOUNT 6011      /* the system, token or router program account is wrong */
#define E_NOT_UPGRADE_AUTHORITY 6012        /* config init not signed by the program upgrade authority */
#define E_NOT_ADMIN 6013                    /* config update not signed by the admin */
#define E_INVALID_RENT_SYSVAR 6014          /* the rent sysvar holds a threshold this program cannot apply */
#define E_INVALID_HOP_COUNT 6015            /* hop count outside 3..10 */
#define E_INVALID_FEE_PARAMETERS 6016       /* fee basis points above 10000 */
#define E_INVALID_AMOUNT 6017               /* zero amount, nothing left after the fee, or a native net amount below a wallet's rent */
#define E_INVALID_SCHEDULE 6018             /* release times or deadline inconsistent */
#define E_INVALID_MINT 6019                 /* mint account invalid or not the route's mint */
#define E_INVALID_TOKEN_ACCOUNT 6020        /* a token account is missing, uninitialised or malformed */
#define E_INVALID_FEE_ACCOUNT 6021          /* a fee account is not the one fixed in the route or config */
#define E_INVALID_ROUTE_PARAMETERS 6022     /* a zero key, the route as recipient, or a recipient token account on a native route or none on an SPL one */
#define E_HOP_COUNT_MISMATCH 6023           /* the caller's existing hop count differs from the route's */
#define E_TOO_MANY_HOPS 6024                /* more intermediate accounts than the route has hops */
#define E_ROUTE_NOT_DEPLOYING 6025          /* the route is past deployment */
#define E_DEPLOYMENT_INCOMPLETE 6026        /* intermediate accounts still missing */
#define E_INVALID_STEP_ACCOUNT 6027         /* a step account does not belong to this route and index */
#define E_INVALID_STEP_INDEX 6028           /* step index outside the route */
#define E_INVALID_ORCHESTRATOR 6029         /* orchestrator config missing or of another source */
#define E_INVALID_RECIPIENT_ACCOUNT 6030    /* recipient token account (or native route's wallet) not the route's or not the recipient's */
#define E_NOT_KEEPER 6031                   /* signer is not the route's keeper */
#define E_ROUTE_NOT_ACTIVE 6032             /* the route is not in a state that allows this */
#define E_SCREENING_PENDING 6033            /* the route awaits its screening verdict */
#define E_ROUTE_FLAGGED 6034                /* screening flagged the route */
#define E_STEP_ALREADY_EXECUTED 6035        /* the step has already run */
#define E_STEP_OUT_OF_ORDER 6036            /* an earlier step has not run yet */
#define E_STEP_NOT_DUE 6037                 /* the step's release time has not come */
#define E_DEADLINE_PASSED 6038              /* the route's deadline has passed */
#define E_WRONG_SOURCE_ACCOUNT 6039         /* the step's source token account is not the fixed one or holds too little */
#define E_WRONG_DESTINATION 6040            /* the step's destination is not the fixed next hop (or recipient wallet), or not an open token account of the recipient */
#define E_NOT_SOURCE 6041                   /* signer is not the route's source wallet */
#define E_ROUTE_SETTLED 6042                /* a settled route cannot be rescued */
#define E_ROUTE_NOT_RESCUABLE 6043          /* active and before its deadline */
#define E_ROUTE_NOT_RECLAIMABLE 6044        /* rent is reclaimed only after settlement or rescue */
#define E_UNKNOWN_ROUTE_ACCOUNT 6045        /* an account to close is not a live account of the route */
#define E_INVALID_SOURCE_TOKEN_ACCOUNT 6046 /* rescue destination is not the source's token account */
#define E_ORCHESTRATOR_HAS_OPEN_ROUTES 6047 /* routes of this source are still open */
#define E_NOT_SCREENING_AUTHORITY 6048      /* signer is not the configured screening authority */
#define E_SCREENING_NOT_PENDING 6049        /* the route has no pending screening */
#define E_INVALID_VERDICT 6050              /* verdict is neither verified nor flagged */
#define E_INVALID_CONFIG 6051               /* protocol config missing or malformed */
#define E_DEPOSIT_ABOVE_MAXIMUM 6052        /* the config's screening deposit exceeds what the source agreed to */
#define E_NOT_PLATFORM_WALLET 6053          /* a withdrawal not signed by the config's platform wallet */
#define E_WITHDRAWAL_TOO_LARGE 6054         /* a withdrawal would leave the config below its rent-exempt minimum */

#endif
