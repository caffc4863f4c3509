import React from "react";

export function Profile({ bio, name }: { bio: string; name: string }) {
  return (
    <section>
      <h2>{name}</h2>
      <div>{bio}</div>
      <img src="/avatar.png" alt={`${name}'s avatar`} />
    </section>
  );
}
