/*
 * The router program's TypeScript client: program id and binaries, PDAs, account layouts,
 * instruction builders, transaction planning, recovery figures, return data and error names.
 */
export * from './accounts.ts';
export * from './bundle.ts';
export * from './errors.ts';
export * from './instructions.ts';
export * from './pda.ts';
export * from './program.ts';
export * from './recovery.ts';
export * from './returns.ts';
