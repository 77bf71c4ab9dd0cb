import { setFlagsFromString } from 'node:v8';

/**
 * How much a WebAssembly function runs before V8 compiles it again with its optimizing compiler, ~17 times
 * V8's default (1.8 MB). Start-up runs Prisma's query compiler and PGlite's PostgreSQL just enough to send
 * dozens of their functions through that compiler on background threads, whose working memory (~40 MB
 * at its peak) stays in glibc's arenas for the life of the process. With this budget the functions a
 * workload really repeats are still optimized within seconds of load, and an idle server does not carry
 * that memory. Imported first by src/main.ts, before any WebAssembly is compiled.
 */
export const WASM_TIERING_BUDGET = 30_000_000;

/**
 * Whether the raised budget is set on this Node: only on Node 20 (V8 11), where it lowers idle memory. On
 * Node 24 (V8 13) it made no measurable difference to idle RSS, so the container's runtime keeps V8's default;
 * Node 22 is left at the default, untried (docs/decisions/0010-build-and-start-up.md, "WebAssembly tiers up
 * later").
 */
export function raisesWasmTieringBudget(nodeVersion = process.versions.node): boolean {
  return Number(nodeVersion.split('.')[0]) === 20;
}

if (raisesWasmTieringBudget()) setFlagsFromString(`--wasm-tiering-budget=${WASM_TIERING_BUDGET}`);
