/** What `run` throws, which must be an `Of` (anything else thrown fails the test as it came); it must throw. */
export function thrownBy<E extends Error>(run: () => unknown, Of: abstract new (...args: never[]) => E): E {
  try {
    run();
  } catch (error) {
    if (error instanceof Of) return error;
    throw error;
  }
  throw new Error(`expected a ${Of.name}`);
}
