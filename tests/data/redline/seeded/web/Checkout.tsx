// DO NOT MERGE — validation seed.
import { useEffect, useState } from 'react';

export function Checkout({ items, html }: { items: string[]; html: string }) {
  const [count, setCount] = useState(0);
  // SEED 1 [HIGH] (web/effect-derived-state) count is derived from items but synced in an effect
  useEffect(() => setCount(items.length), [items]);
  localStorage.setItem('session', document.cookie); // SEED 2 [BLOCKER] (web/token-in-storage) session token in localStorage
  return (
    <div>
      {/* SEED 3 [BLOCKER] (core/unsafe-html) request markup rendered unescaped */}
      <div dangerouslySetInnerHTML={{ __html: html }} />
      <span>{count}</span>
      <ul>
        {/* SEED 4 [SUGGESTION] (web/key-is-index) */} {items.map((item, i) => <li key={i}>{item}</li>)}
      </ul>
    </div>
  );
}
