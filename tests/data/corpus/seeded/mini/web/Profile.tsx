import React from "react";

export function Profile({ bio, name }: { bio: string; name: string }) {
  return (
    <section>
      <h2>{name}</h2>
      {/* SEED 5 [BLOCKER] (core/xss) user bio rendered as raw HTML */}
      <div dangerouslySetInnerHTML={{ __html: bio }} />
      <img src="/avatar.png" /> {/* SEED 6 [MINOR] (core/accessibility) image has no alt text */}
    </section>
  );
}
