import { useEffect, useRef, type ReactNode } from 'react';

/**
 * The page's h1, focused when the page opens: a screen reader announces the new page after a client-side route
 * change, as it would after a load.
 */
export function PageHeading({ children }: { children: ReactNode }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    heading.current?.focus();
  }, []);
  return (
    <h1 ref={heading} tabIndex={-1}>
      {children}
    </h1>
  );
}
