import { createContext, useContext } from 'react';
import type { PaymentsClient } from '@payments/client';
import type { Session } from './session.js';

export interface ConsoleContextValue {
  client: PaymentsClient<'1.1'>;
  session: Session;
}

export const ConsoleContext = createContext<ConsoleContextValue | null>(null);

/** The signed-in admin's client and session; only pages inside the shell use it. */
export function useConsole(): ConsoleContextValue {
  const value = useContext(ConsoleContext);
  if (!value) throw new Error('useConsole is used outside the signed-in shell');
  return value;
}
