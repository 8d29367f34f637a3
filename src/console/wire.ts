/**
 * Every JSON shape the console page reads or sends, declared once: the server builds them, the page script
 * renders them, the tests check them. None of them ever holds a token, a code or a secret.
 */

/** One credential as the page shows it: a vault summary, flattened for display. */
export interface AccountView {
  id: string;
  subject: string;
  /** By name: "GitHub", "GitHub (HOST)" for a self-hosted preset, a named issuer, else the issuer's host. */
  provider: string;
  issuer: string;
  resource: string;
  /** The resource by name ("Demo API"), else the resource itself; "" when there is none. */
  resourceName: string;
  /** Who the account is at the provider (login, email, name), or "" when unknown. */
  account: string;
  scopes: string[];
  /** Access-token expiry (ms since the epoch); null when the server did not say. */
  expiresAt: number | null;
  /** "active", "expired" (access token past its expiry, refresh possible), or "login_required". */
  status: "active" | "expired" | "login_required";
  /** The last write of the record (sign-in or refresh), ms since the epoch. */
  updatedAt: number;
  createdAt: number;
  canRefresh: boolean;
}

/** A row the vault holds but cannot read (damaged, or sealed with another key): named so it can be deleted. */
export interface UnreadableView {
  id: string;
  subject: string | null;
  issuer: string | null;
  message: string;
}

/** A RAP call waiting for a person (or just finished: kept a short while so the result shows). */
export interface PendingView {
  groupId: string;
  id: string;
  toolset: string;
  operation: string;
  /** The tool's `requiresAuth` provider name, or null. */
  provider: string | null;
  userId: string | null;
  /** "authorizing" while the person has to act; then "completed" or "failed". */
  status: "authorizing" | "completed" | "failed";
  /** The link the tool sent; present only while the call waits (RAP: the runtime must not keep it). */
  authUrl: string | null;
  /** The call's result text once it arrived (sanitised). */
  result: string | null;
  isError: boolean;
  since: number;
}

export type ActivityComponent = "vault" | "console" | "rap" | "acp" | "ahp" | "idp" | "demo";

export type ActivityKind =
  | "sign_in"
  | "refresh"
  | "refresh_refused"
  | "revoke"
  | "logout"
  | "expiry_notice"
  | "renewal"
  | "authorization_requested"
  | "authorization_completed"
  | "result"
  | "console_link"
  | "error";

/** One auth event: when, which component, what, in plain words. Never a secret. */
export interface ActivityEvent {
  seq: number;
  at: number;
  component: ActivityComponent;
  kind: ActivityKind;
  /** Whose credential or call, when known. */
  subject?: string;
  /** The vault credential it is about (vault events), so the page can draw that account's refreshes. */
  credentialId?: string;
  summary: string;
}

export interface ConnectTargetView {
  id: string;
  label: string;
}

/** The demo thread panel (RAP): invoke an example operation as a user and watch the call. */
export interface RapPanelState {
  users: string[];
  operations: string[];
  calls: {
    groupId: string;
    id: string;
    userId: string;
    operation: string;
    /** The runtime's call status: "pending", "authorizing", "completed", "failed", "timed_out", "cancelled". */
    status: string;
    authUrl: string | null;
    result: string | null;
    isError: boolean;
    at: number;
  }[];
}

/** A device-flow prompt shown to the person (the verification page and the code to type there). */
export interface DevicePromptView {
  verificationUri: string;
  verificationUriComplete: string | null;
  userCode: string;
}

/** The ACP panel: the example agent as the demo's own ACP client sees it. */
export interface AcpPanelState {
  /** The command line that starts the example agent (for the person to try in a terminal). */
  agentCommand: string;
  /** null until the first status check. */
  signedIn: boolean | null;
  accounts: { label: string; expiresAt: number | null }[];
  methods: { id: string; name: string; type: string }[];
  /** The device prompt while a login waits for the person. */
  prompt: DevicePromptView | null;
  /** What is running now ("status", "login", "logout"), or null. */
  busy: string | null;
  lastError: string | null;
  checkedAt: number | null;
}

/** One AHP resource as the demo shows it; never a token. */
export interface AhpResourceView {
  resource: string;
  name: string;
  authenticated: boolean;
  subject: string | null;
  scopes: string[];
  expiresAt: number | null;
  renewals: number;
  lastRenewalAt: number | null;
}

/** The AHP panel: the demo's own AHP client connected to the example host. */
export interface AhpPanelState {
  url: string;
  connected: boolean;
  resources: AhpResourceView[];
  prompt: DevicePromptView | null;
  busy: string | null;
  lastError: string | null;
}

export interface PanelView {
  id: "rap" | "acp" | "ahp";
  title: string;
  state: RapPanelState | AcpPanelState | AhpPanelState;
}

/** What `GET /api/state` answers and each server-sent `state` event carries. */
export interface ConsoleState {
  accounts: AccountView[];
  unreadable: UnreadableView[];
  pending: PendingView[];
  activity: ActivityEvent[];
  connectTargets: ConnectTargetView[];
  panels: PanelView[];
  now: number;
}

/** Every error the console's API answers: `{"error": {"code", "message"}}`. */
export interface ConsoleErrorBody {
  error: { code: string; message: string };
}
