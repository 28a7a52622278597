import { useSyncExternalStore, type AnchorHTMLAttributes, type MouseEvent } from 'react';

/** Where the gateway serves the console; every client-side route is below it. */
export const CONSOLE_BASE = '/console';
const NAVIGATED = 'console:navigate';

function subscribe(onChange: () => void): () => void {
  window.addEventListener('popstate', onChange);
  window.addEventListener(NAVIGATED, onChange);
  return () => {
    window.removeEventListener('popstate', onChange);
    window.removeEventListener(NAVIGATED, onChange);
  };
}

/** The route: the path below /console, e.g. `/users` or `/reconciliation/cases/<id>`; `/` for the console itself. */
export function currentRoute(): string {
  const { pathname } = window.location;
  const below = pathname.startsWith(CONSOLE_BASE) ? pathname.slice(CONSOLE_BASE.length) : pathname;
  return below.replace(/\/+$/, '') || '/';
}

export function useRoute(): string {
  return useSyncExternalStore(subscribe, currentRoute);
}

export function navigate(route: string): void {
  window.history.pushState(null, '', `${CONSOLE_BASE}${route}`);
  window.dispatchEvent(new Event(NAVIGATED));
}

/** A link to a console route: a real `href` (new tab, copy link), followed in place on a plain click. */
export function Link({
  to,
  ...anchor
}: { to: string } & Omit<AnchorHTMLAttributes<HTMLAnchorElement>, 'href'>) {
  const onClick = (event: MouseEvent<HTMLAnchorElement>) => {
    anchor.onClick?.(event);
    if (event.defaultPrevented || event.button !== 0) return;
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(to);
  };
  return <a {...anchor} href={`${CONSOLE_BASE}${to}`} onClick={onClick} />;
}
