/** The embedded authorization server's demo people: enough to show accounts, names, emails and organizations. */

export interface DemoUser {
  sub: string;
  name: string;
  email: string;
  organization: string;
  /** Demo-only: the login page accepts this password. Never use the embedded server for real accounts. */
  password: string;
}

export const DEMO_USERS: readonly DemoUser[] = [
  {
    sub: "alice",
    name: "Alice Liddell",
    email: "alice@example.test",
    organization: "Wonderland Labs",
    password: "alice",
  },
  {
    sub: "bob",
    name: "Bob Builder",
    email: "bob@example.test",
    organization: "Fixit Ltd",
    password: "bob",
  },
  {
    sub: "carol",
    name: "Carol Danvers",
    email: "carol@example.test",
    organization: "Example Org",
    password: "carol",
  },
];

export function findDemoUser(sub: string): DemoUser | undefined {
  return DEMO_USERS.find((user) => user.sub === sub);
}

/** OIDC claims for a user, filtered by oidc-provider according to the granted scopes. */
export function demoClaims(user: DemoUser): { sub: string; [claim: string]: unknown } {
  return {
    sub: user.sub,
    name: user.name,
    preferred_username: user.sub,
    email: user.email,
    email_verified: true,
    org: user.organization,
  };
}
