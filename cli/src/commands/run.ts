import type { CommandContext, GlobalArgs } from '../context.js';

export type Handler<A> = (ctx: CommandContext, argv: A) => Promise<void>;

/** Turns a command's handler into a yargs handler that first builds the context from the global options. */
export type Run = <A>(handler: Handler<A>) => (argv: A & GlobalArgs) => Promise<void>;
