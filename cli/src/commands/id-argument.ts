import type { Argv } from 'yargs';

/** A command's one required id (`<name>`), and an example of the command with one. */
export const idArgument =
  <N extends string>(name: N, describe: string, example: string) =>
  <T>(y: Argv<T>) =>
    y.positional(name, { type: 'string', demandOption: true, describe }).example(example, '');
